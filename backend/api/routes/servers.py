"""The MCP servers: every server's live status, tools and log for anyone signed in; adding,
editing, switching off, removing and restarting them for admins (issue 15, "Managing servers")."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query, status

from backend.api.deps import Admin, Services, Viewer
from backend.app.services import AppServices
from backend.api.schemas import (
    DescriptionFlagView,
    NewServerBody,
    ServerEntryBody,
    ServerEntryView,
    ServerLogView,
    ServerView,
    ToolView,
)
from backend.app.policy import PolicyService
from backend.app.servers_admin import ManagedServer
from backend.domain.description_scan import scan_tool
from backend.domain.tools import ToolInfo

router = APIRouter(prefix="/api/servers", tags=["servers"])

ServerName = Path(min_length=1, max_length=40)
ToolName = Path(min_length=1, max_length=200)


def server_views(services: AppServices) -> list[ServerView]:
    """Every server as the API and the live channel (`servers.changed`) describe it."""
    return [_view(server, services) for server in services.servers.servers()]


def _view(server: ManagedServer, services: AppServices) -> ServerView:
    state = server.status
    return ServerView(
        name=state.name,
        state=state.state,
        error=state.error,
        restarts=state.restarts,
        last_restart=state.last_restart,
        tools=[_tool_view(tool, services.policies) for tool in state.tools],
        type=server.config.type if server.config is not None else "stdio",
        url=state.url,
        last_http_error=state.last_http_error,
        needs_sign_in=state.needs_sign_in,
        builtin=server.builtin,
        enabled=server.enabled,
        editable=server.editable,
        confinement=services.servers.confinement(server),
    )


def _tool_view(tool: ToolInfo, policies: PolicyService) -> ToolView:
    return ToolView(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=tool.annotations.model_dump(),
        policy=policies.policy_for(tool.name),
        effective_policy=policies.effective_policy(tool),
        changed=tool.changed,
        flags=[
            DescriptionFlagView(kind=f.kind, reason=f.reason, where=f.where, excerpt=f.excerpt)
            for f in scan_tool(tool.description, tool.input_schema)
        ],
    )


@router.get("")
async def list_servers(services: Services, _: Viewer) -> list[ServerView]:
    """Every MCP server (those switched off too), its state, and each tool's policy."""
    return server_views(services)


@router.get("/{name}/log")
async def server_log(
    services: Services, _: Viewer, name: str = ServerName, lines: int = Query(100, ge=1, le=1000)
) -> ServerLogView:
    """The end of what the server wrote to stderr (credential-shaped text redacted)."""
    return ServerLogView(name=name, lines=await services.servers.log_tail(name, lines=lines))


@router.get("/{name}/config")
async def server_config(services: Services, _: Admin, name: str = ServerName) -> ServerEntryView:
    """A person's server entry as the config file has it (literal env and header values hidden)."""
    return ServerEntryView(name=name, entry=services.servers.entry(name))


@router.post("", status_code=status.HTTP_201_CREATED)
async def add_server(body: NewServerBody, services: Services, _: Admin) -> ServerView:
    """Add a server: validated (422 naming the field), written to the config file, then started."""
    return _view(await services.servers.add(body.name, body.entry), services)


@router.put("/{name}")
async def update_server(body: ServerEntryBody, services: Services, _: Admin, name: str = ServerName) -> ServerView:
    """Replace a server's entry; a running server restarts with it."""
    return _view(await services.servers.update(name, body.entry), services)


@router.post("/{name}/disable")
async def disable_server(services: Services, _: Admin, name: str = ServerName) -> ServerView:
    return _view(await services.servers.set_enabled(name, False), services)


@router.post("/{name}/enable")
async def enable_server(services: Services, _: Admin, name: str = ServerName) -> ServerView:
    return _view(await services.servers.set_enabled(name, True), services)


@router.post("/{name}/restart")
async def restart_server(services: Services, admin: Admin, name: str = ServerName) -> ServerView:
    """Restart a running server, a built-in one too."""
    return _view(await services.servers.restart(name, by=admin.name), services)


@router.post("/{name}/tools/{tool}/accept")
async def accept_tool_definition(
    services: Services, admin: Admin, name: str = ServerName, tool: str = ToolName
) -> ServerView:
    """Accept a changed tool's new definition (issue 34): it becomes the tool's pin, an audit row
    names the admin, and the rules decide its calls again. 404 when the tool is not changed now;
    409 when another definition was accepted meanwhile."""
    await services.tool_pins.accept(name, tool, by=admin)
    return _view(services.servers.server(name), services)


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_server(services: Services, _: Admin, name: str = ServerName) -> None:
    """Take a server out of the config file and stop it."""
    await services.servers.remove(name)
