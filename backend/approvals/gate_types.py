"""What the gate works with: the session and call it is handed, what it decides, and the parts
it is given (the pool that runs tools, the bus, the session's owner). The gate itself is gate.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from backend.domain.checkpoints import Checkpoint
from backend.domain.models import AuditEntry, Event, EventType, StandingScope, ToolCallRecord
from backend.domain.tools import ToolAnnotations, ToolInfo, ToolResult
from backend.rules.agent_fence import AgentFence
from backend.approvals.broker import Publisher
from backend.rules.policy_engine import Policy, ToolCallView
from backend.rules.grammar import RuleSet
from backend.rules.search_results import Redactor
from backend.sandbox.config import AgentSandbox

INTERRUPTED = (
    "The host restarted while this tool call was running. It was not run again: "
    "check whether it had its effect before repeating it."
)
ERROR_HINT = "\n\n(The call failed. Read the error, then try a different approach rather than repeating the same call.)"


TaskStarted = Callable[[str], Awaitable[None]]
"""Told the id of the task a server created for a call (a tool that runs as an MCP task)."""

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
"""Told what a running tool reports: progress, total (if known), message."""


class ToolRunner(Protocol):
    """What actually runs tools: the shared MCP pool."""

    def tool(self, name: str) -> ToolInfo | None: ...

    def tools(self) -> list[ToolInfo]: ...

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        workspace: Path,
        session_id: str,
        timeout: float | None = None,
        call_id: str | None = None,
        redact: Redactor | None = None,
        on_progress: ProgressCallback | None = None,
        sandbox: Mapping[str, Any] | None = None,
        on_task: TaskStarted | None = None,
        resume_task: str | None = None,
    ) -> ToolResult:
        """Run a tool; `call_id` ties what the server asks mid-call (questions, sampling) to the call,
        `redact` rewrites its result before anything stores or spills it, `on_progress` hears
        the tool's progress reports while it runs, and `sandbox` confines a command it runs.
        `on_task` hears the id of the task a server runs the call as; `resume_task` (such an id,
        after a restart) fetches that task's result instead of calling the tool."""
        ...


class GateBus(Publisher, Protocol):
    """Where the gate's events go (the engine's EventBus): persisted ones, and ephemeral progress."""

    async def publish_delta(self, session_id: str, type_: EventType, data: dict[str, Any]) -> Event: ...

    async def publish_pair(
        self,
        session_id: str,
        first: tuple[EventType, dict[str, Any]],
        second: tuple[EventType, dict[str, Any]],
        *,
        persist: Callable[[Event, Event], Awaitable[tuple[Event, Event]]],
    ) -> tuple[Event, Event]: ...


class StepCheckpoints(Protocol):
    """Takes the checkpoint of the workspace before a step (`backend.checkpoints.steps.Checkpointer`).

    The gate calls it once the call is allowed, before the tool starts, and hands it the
    step's start to write (`start`): with the checkpoint's row and event when one was taken, in
    one transaction. It never blocks the step: a checkpoint it cannot take is said in the
    session's events, and the step runs."""

    async def before_step(
        self,
        *,
        session_id: str,
        workspace: Path,
        call_id: str,
        tool_name: str,
        annotations: ToolAnnotations | None,
        start: Callable[[Checkpoint | None, dict[str, Any] | None], Awaitable[None]] | None = None,
    ) -> object | None: ...


class SessionSink(Protocol):
    """The session's owner, told what the gate changes about a session."""

    async def approval_waiting(self, session_id: str, delta: int) -> None: ...

    async def add_session_rules(self, session_id: str, rules: list[str]) -> None: ...


@dataclass(kw_only=True)
class GateSession:
    """What the gate needs to know about the session a call belongs to."""

    session_id: str
    workspace: Path
    mode: str = "agent"
    rules: list[str] = field(default_factory=list)
    """"Allow for this session" rules."""
    mode_policies: dict[str, Policy] = field(default_factory=dict)
    """The mode's policy overrides, e.g. plan mode's `mcp__file__write_file: deny`."""
    offered: frozenset[str] | None = None
    """Full names of the tools the mode offers; None offers every tool. A call to any other
    tool is refused before any policy is looked at: the model was never shown it."""
    agent_rules: RuleSet | None = None
    """The session's named agent's own rules (issue 19), added to the global ones; deny still wins."""
    agent_id: str | None = None
    """The named agent the session runs (None or "main": none), whose "always allow" rules it shares."""
    sandbox: AgentSandbox | None = None
    """The named agent's own sandbox settings (network allowlist, auto_allow), if it has any."""
    fence: AgentFence | None = None
    """The other named agents' folders, which its calls may not touch (None: it is the only agent)."""


    @property
    def standing_scope(self) -> StandingScope:
        """Where a non-admin's "always allow" in this session is kept: its agent's, else its workspace's."""
        return StandingScope.of_session(self.workspace, self.agent_id)


@dataclass(kw_only=True)
class GateCall:
    """One call to decide and run."""

    id: str
    name: str
    arguments: dict[str, Any]
    argument_error: str | None = None
    resumed: bool = False
    """A call an earlier run (or process) left open: an approval it left pending may be stale."""


@dataclass(kw_only=True)
class GateDecision:
    """What `ToolGate.decide` concluded about one call.

    Refused: `result` is the error result the model gets, already recorded. Allowed: `allow` is
    the audit row `execute` writes as the tool starts, and the call waits in the gate's ledger.
    """

    record: ToolCallRecord
    result: ToolResult | None = None
    view: ToolCallView | None = None
    allow: AuditEntry | None = None
    unprotect: tuple[str, ...] = ()
    """Instruction files a person allowed this call to change: writable in its sandbox."""
    outside: bool = False
    """A person allowed this one command to run outside the sandbox."""

    @property
    def allowed(self) -> bool:
        return self.allow is not None

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments that were decided on (a person's edits included)."""
        return self.record.arguments


NOT_DECIDED = "No allow decision was recorded for this tool call, so it was not run."
CHANGED = "The arguments differ from the ones that were allowed, so the call was not run."
