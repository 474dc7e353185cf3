"""The MCP servers: every server's live status, tools and log for anyone signed in; adding,
editing, switching off, removing and restarting them for admins (issue 15, "Managing servers")."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query, status

from backend.api.deps import Admin, HostDep, Viewer
from backend.api.schemas import (
    NewServerBody,
    ServerEntryBody,
    ServerEntryView,
    ServerLogView,
    ServerView,
    ToolView,
)
from backend.app.host import Host
from backend.app.servers_admin import ManagedServer
from backend.config import PolicyValue
from backend.domain.tools import ToolInfo
from backend.rules.policy_engine import PolicyEngine
from backend.sandbox.launcher import SandboxStatus
from backend.sandbox.servers import confinement_text

router = APIRouter(prefix="/api/servers", tags=["servers"])

ServerName = Path(min_length=1, max_length=40)


def server_views(host: Host) -> list[ServerView]:
    """Every server as the API and the live channel (`servers.changed`) describe it."""
    policy = host.policies.engine
    return [_view(server, policy, host.sandbox.status) for server in host.servers.servers()]


def _view(server: ManagedServer, policy: PolicyEngine, sandbox: SandboxStatus) -> ServerView:
    state = server.status
    entry = server.config.sandbox if server.config is not None else None
    return ServerView(
        name=state.name,
        state=state.state,
        error=state.error,
        restarts=state.restarts,
        last_restart=state.last_restart,
        tools=[_tool_view(tool, policy) for tool in state.tools],
        type=server.config.type if server.config is not None else "stdio",
        url=state.url,
        last_http_error=state.last_http_error,
        needs_sign_in=state.needs_sign_in,
        builtin=server.builtin,
        enabled=server.enabled,
        editable=server.editable,
        confinement=confinement_text(state.name, entry, sandbox, builtin=server.builtin),
    )


def _tool_view(tool: ToolInfo, policy: PolicyEngine) -> ToolView:
    return ToolView(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=tool.annotations.model_dump(),
        policy=policy.policy_for(tool.name),
        effective_policy=_effective(tool, policy),
    )


def _effective(tool: ToolInfo, policy: PolicyEngine) -> PolicyValue:
    """What a call no rule matches gets (PolicyEngine.evaluate's last steps, without arguments)."""
    chosen = policy.policy_for(tool.name)
    if chosen is not None:
        return chosen
    hints = tool.annotations
    read_only = hints.readOnlyHint is True and hints.destructiveHint is not True
    if policy.read_only_auto_allow and tool.server in policy.trusted_servers and read_only:
        return "always_allow"
    return "ask"


@router.get("")
async def list_servers(host: HostDep, _: Viewer) -> list[ServerView]:
    """Every MCP server (those switched off too), its state, and each tool's policy."""
    return server_views(host)


@router.get("/{name}/log")
async def server_log(
    host: HostDep, _: Viewer, name: str = ServerName, lines: int = Query(100, ge=1, le=1000)
) -> ServerLogView:
    """The end of what the server wrote to stderr (credential-shaped text redacted)."""
    return ServerLogView(name=name, lines=await host.servers.log_tail(name, lines=lines))


@router.get("/{name}/config")
async def server_config(host: HostDep, _: Admin, name: str = ServerName) -> ServerEntryView:
    """A person's server entry as the config file has it (literal env and header values hidden)."""
    return ServerEntryView(name=name, entry=host.servers.entry(name))


@router.post("", status_code=status.HTTP_201_CREATED)
async def add_server(body: NewServerBody, host: HostDep, _: Admin) -> ServerView:
    """Add a server: validated (422 naming the field), written to the config file, then started."""
    return _view(await host.servers.add(body.name, body.entry), host.policies.engine, host.sandbox.status)


@router.put("/{name}")
async def update_server(body: ServerEntryBody, host: HostDep, _: Admin, name: str = ServerName) -> ServerView:
    """Replace a server's entry; a running server restarts with it."""
    return _view(await host.servers.update(name, body.entry), host.policies.engine, host.sandbox.status)


@router.post("/{name}/disable")
async def disable_server(host: HostDep, _: Admin, name: str = ServerName) -> ServerView:
    return _view(await host.servers.set_enabled(name, False), host.policies.engine, host.sandbox.status)


@router.post("/{name}/enable")
async def enable_server(host: HostDep, _: Admin, name: str = ServerName) -> ServerView:
    return _view(await host.servers.set_enabled(name, True), host.policies.engine, host.sandbox.status)


@router.post("/{name}/restart")
async def restart_server(host: HostDep, admin: Admin, name: str = ServerName) -> ServerView:
    """Restart a running server, a built-in one too."""
    return _view(await host.servers.restart(name, by=admin.name), host.policies.engine, host.sandbox.status)


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_server(host: HostDep, _: Admin, name: str = ServerName) -> None:
    """Take a server out of the config file and stop it."""
    await host.servers.remove(name)
