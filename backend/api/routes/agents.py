"""The invoke-agent API: run an agent to its end, for programs."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Approver, HostDep
from backend.api.schemas import InvokeRequest, InvokeResponse
from backend.routing import route

router = APIRouter(prefix="/api/agents", tags=["agents"])


@router.post("/invoke")
async def invoke(body: InvokeRequest, host: HostDep, principal: Approver) -> InvokeResponse:
    """Runs until the session ends (approvals inside it wait for a person as usual). The session
    belongs to the agent the request names, else to its parent's, else to the `rest` route's, else main."""
    result = await host.sessions.invoke(
        prompt=body.prompt,
        mode=body.mode,
        model=body.model,
        engine=body.engine,
        parent_session_id=body.parent_session_id,
        fork=body.fork,
        # A child belongs to its parent's agent unless it names one; a top-level call is routed.
        agent=body.agent
        if body.parent_session_id
        else route(host.agents.routes, channel="rest", user=principal.name, named=body.agent),
    )
    return InvokeResponse(
        session_id=result.session_id,
        response=result.response,
        status=result.status,
        cost_usd=result.cost_usd,
        tokens={"input": result.input_tokens, "output": result.output_tokens},
    )
