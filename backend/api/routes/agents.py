"""Named agents (issue 19): list them (anyone signed in), create and edit them (admins; written to
the config file), and the invoke-agent API that runs one to its end, for programs."""

from __future__ import annotations

from fastapi import APIRouter, status
from pydantic import BaseModel

from backend.agents import Agent, AgentConfig
from backend.api.deps import Admin, Approver, Services, Viewer
from backend.api.schemas import InvokeRequest, InvokeResponse
from backend.config import PermissionsConfig

router = APIRouter(prefix="/api/agents", tags=["agents"])


class AgentView(BaseModel):
    """An agent as the dashboard shows it: its settings and the workspace they resolve to."""

    id: str
    name: str
    workspace: str
    model: str | None
    mode: str | None
    servers: list[str] | None
    """None: every configured server."""
    permissions: PermissionsConfig
    configured_workspace: str | None
    """The workspace as written in the config (None: the default one)."""


def view(agent: Agent) -> AgentView:
    return AgentView(
        id=agent.id,
        name=agent.name,
        workspace=str(agent.workspace),
        model=agent.model,
        mode=agent.mode,
        servers=sorted(agent.servers) if agent.servers is not None else None,
        permissions=agent.config.permissions,
        configured_workspace=agent.config.workspace,
    )


@router.get("")
async def list_agents(services: Services, _: Viewer) -> list[AgentView]:
    """Every agent, main first."""
    return [view(a) for a in services.agents.list()]


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_agent(body: AgentConfig, services: Services, _: Admin) -> AgentView:
    """Add an agent to the config file; 409 if the id is taken, 422 naming what does not validate."""
    return view(services.agent_admin.create(body).get(body.id))


@router.put("/{agent_id}")
async def update_agent(agent_id: str, body: AgentConfig, services: Services, _: Admin) -> AgentView:
    """Replace an agent's settings in the config file; its new sessions and turns use them at once."""
    return view(services.agent_admin.update(agent_id, body).get(agent_id))


@router.post("/invoke")
async def invoke(body: InvokeRequest, services: Services, principal: Approver) -> InvokeResponse:
    """Runs until the session ends (approvals inside it wait for a person as usual). The session
    belongs to the agent the request names, else to its parent's, else to the `rest` route's, else main."""
    result = await services.sessions.invoke(
        prompt=body.prompt,
        options=body.options(
            # A child belongs to its parent's agent unless it names one; a top-level call is routed.
            agent=body.agent
            if body.parent_session_id
            else services.agent_routes.agent_for("rest", user=principal.name, named=body.agent),
        ),
    )
    return InvokeResponse(
        session_id=result.session_id,
        response=result.response,
        status=result.status,
        cost_usd=result.cost_usd,
        tokens={"input": result.input_tokens, "output": result.output_tokens},
    )
