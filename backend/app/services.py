"""AppServices: the application layer as the transports meet it, one service per resource.

The REST API, the WebSocket, the MCP gateway and the channels get this and never the Host: what
lies beneath the app layer (the store, the MCP pool, the runner, the broker, the gate) is reached
only through a service that owns the rules for it. The Host, the composition root, builds it.
The import contract `transports-use-the-app` (pyproject.toml) keeps the transports from
importing those layers; this value keeps them from reaching them by attribute.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.agents import Agents
from backend.app.agent_routes import AgentRoutes
from backend.app.agents_admin import AgentAdmin
from backend.app.approvals import ApprovalService
from backend.app.heartbeat_runs import HeartbeatRuns
from backend.app.audit import AuditLog
from backend.app.checkpoints import CheckpointService
from backend.app.direct_tools import DirectTools
from backend.app.gateway_tasks import GatewayTaskService
from backend.app.model_settings import ModelSettings
from backend.app.policy import PolicyService
from backend.app.rule_references import RuleReferences
from backend.app.server_sign_ins import ServerSignIns
from backend.app.servers_admin import ServerAdmin
from backend.app.tool_pins import ToolPinService
from backend.app.session_edits import SessionEditor
from backend.app.sessions import SessionService
from backend.app.spend import SpendReport
from backend.app.standing import Standing
from backend.checkpoints.usage import CheckpointUsage
from backend.config import Settings
from backend.engine.events import EventBus, Subscription
from backend.modes.registry import ModeRegistry
from backend.sandbox.launcher import SandboxStatus
from backend.scheduler import Scheduler
from backend.skills.catalog import SkillCatalog
from backend.workflows.runner import WorkflowRunner


__all__ = ["AppServices", "Attached", "Lifecycle", "Subscription"]
"""`Subscription`: a feed of events as `events.subscribe` hands it out, named here for the transports."""


class Attached(Protocol):
    """A long-lived part above the app layer (a channel) that the host starts and stops with itself."""

    async def start(self) -> None: ...
    async def aclose(self) -> None: ...


class Lifecycle(Protocol):
    """The running host as a transport may drive it: start, stop, and what it starts with itself."""

    attached: list[Attached]
    """Started after recovery, stopped first (channels, sign-ins waiting on a browser)."""

    @property
    def closing(self) -> bool: ...
    async def start(self, *, recover: bool = True) -> None: ...
    def begin_shutdown(self) -> None: ...
    async def aclose(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class AppServices:
    """Every service a transport may use; built once by the Host."""

    settings: Settings
    data_dir: Path
    lifecycle: Lifecycle
    sessions: SessionService
    session_edits: SessionEditor
    approvals: ApprovalService
    servers: ServerAdmin
    policies: PolicyService
    model_settings: ModelSettings
    agents: Agents
    agent_admin: AgentAdmin
    modes: ModeRegistry
    skills: SkillCatalog
    standing: Standing
    audit: AuditLog
    spend: SpendReport
    schedules: Scheduler
    workflows: WorkflowRunner
    sign_ins: ServerSignIns
    sandbox: SandboxStatus
    """What confines commands here (bubblewrap, Landlock), or why nothing does."""
    events: EventBus
    """The live feed of every session's events (subscribe, replay); publishing is the engine's."""
    agent_routes: AgentRoutes
    """Which named agent a message coming through a door belongs to (`routes:`)."""
    heartbeat_runs: HeartbeatRuns
    """A heartbeat round's session, started by the one host that claims the round."""
    direct_tools: DirectTools
    """A client's direct tool calls through the gate (the gateway's `--expose-tools`)."""
    checkpoints: CheckpointService
    """A session's steps with what each changed in the workspace, and rewinding them (issue 32)."""
    checkpoints_usage: Callable[[], Awaitable[CheckpointUsage]]
    """The disk checkpoints take, in all and per workspace, with their retention (for Settings)."""
    tool_pins: ToolPinService
    """Accepting a changed tool's new definition (issue 34): admins only, audited."""
    rule_references: RuleReferences
    """Rules that name a server or tool that does not exist here, for Settings (issue 35, item 12)."""
    gateway_tasks: GatewayTaskService | None = None
    """`invoke_agent` runs started as MCP tasks, each bound to its caller (issue 35, item 6); None:
    the gateway offers no tasks (a host built without it)."""
