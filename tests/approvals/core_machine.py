"""The approval core as one process would run it, for the stateful property test.

`World` is one lifetime of the host's core over a real SQLite file: store, bus, broker, gate,
the approval door and the policy owner. A restart closes one world and opens the next on the
same file and config. What outlives a world is the outside world: the clock and the tools,
which record every run and check, as each run starts, that its allow is already on record.

`settle` waits, bounded, until every task is done or blocked where only the next step can move
it (a pending approval, a held tool); nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from backend.app.approvals import ApprovalService
from backend.app.policy import PolicyService
from backend.config import CONFIG_FILE_NAME, PermissionsConfig, Settings, read_yaml
from backend.domain.models import Approval, Session, utcnow
from backend.domain.tools import ToolInfo, ToolResult
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.approvals.gate import GateSession, ToolGate
from backend.store.sqlite import SqliteStore

SHELL = "mcp__shell__exec"
APPROVAL_TIMEOUT = 600.0
BACKGROUND_TASKS = frozenset({"approval-watch", "sqlite-checkpoint"})
"""Loops the core keeps while it runs; they never decide anything, so settling ignores them."""
SETTLE_SECONDS = 30.0
"""Bound on one settle; the core normally settles within a few store round trips."""

CURRENT_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_call", default=None)
"""The call a task runs, set by the machine when it starts the task (child tasks inherit it)."""


class Clock:
    """The broker's clock: wall time at the start, then moved only by the test."""

    def __init__(self) -> None:
        self.now: datetime = utcnow()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass(kw_only=True)
class Run:
    """One start of a tool, as the tool saw it."""

    call_id: str
    session_id: str
    arguments: dict[str, Any]
    allow_on_record: bool
    """An allow audit row for this call with exactly these arguments existed when it started."""
    running_on_record: bool
    """The call's record said "running" when it started."""


class RecordingTools:
    """The stand-in pool: one shell tool that records each run; a run can be held open."""

    def __init__(self) -> None:
        self.store: SqliteStore | None = None
        self.ran: list[Run] = []
        self.slow: set[str] = set()
        """Call ids whose run stays open until `release`."""
        self._held: dict[str, tuple[asyncio.Task[Any], asyncio.Event]] = {}
        self._info = ToolInfo(name=SHELL, server="shell", tool="exec")

    def tool(self, name: str) -> ToolInfo | None:
        return self._info if name == SHELL else None

    def tools(self) -> list[ToolInfo]:
        return [self._info]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        workspace: Path,
        session_id: str,
        timeout: float | None = None,
        call_id: str | None = None,
        redact: Any = None,
        on_progress: Any = None,
        on_task: Any = None,
    ) -> ToolResult:
        call_id = CURRENT_CALL.get()
        assert call_id is not None and self.store is not None, "a tool ran outside a call the test started"
        audit = await self.store.list_audit(session_id=session_id, limit=100_000)
        records = {r.id: r for r in await self.store.list_tool_calls(session_id)}
        record = records.get(call_id)
        self.ran.append(
            Run(
                call_id=call_id,
                session_id=session_id,
                arguments=dict(arguments),
                allow_on_record=any(
                    e.tool_call_id == call_id and e.decision == "allow" and e.arguments == arguments for e in audit
                ),
                running_on_record=record is not None and record.status == "running",
            )
        )
        if call_id in self.slow:
            released = asyncio.Event()
            self._held[call_id] = (asyncio.current_task(), released)  # type: ignore[assignment]
            try:
                await released.wait()
            finally:
                self._held.pop(call_id, None)
        return ToolResult(text=f"ran {call_id}")

    def held(self) -> list[str]:
        """Call ids whose run is open, waiting for `release`."""
        return sorted(self._held)

    def release(self, call_id: str) -> None:
        self._held[call_id][1].set()

    def holds(self, task: asyncio.Task[Any]) -> bool:
        return any(t is task and not e.is_set() for t, e in self._held.values())


class TrackedBroker(ApprovalBroker):
    """The real broker, telling the test which task waits on which approval.

    Reads the broker's waiter futures (private to it): the test must know a waiter is parked on
    its future, and must wake parked waiters after it moves the clock, as real time would.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting: dict[asyncio.Task[Any], str] = {}

    async def wait(self, approval_id: str) -> Approval:
        task = asyncio.current_task()
        assert task is not None
        self.waiting[task] = approval_id
        try:
            return await super().wait(approval_id)
        finally:
            self.waiting.pop(task, None)

    def parked(self, task: asyncio.Task[Any]) -> str | None:
        """The approval `task` is parked on (its future set up and not yet resolved), if any."""
        approval_id = self.waiting.get(task)
        if approval_id is None:
            return None
        waiter = self._waiters.get(approval_id)
        return approval_id if waiter is not None and not waiter.done() else None

    def wake_all(self) -> None:
        """What the passing of real time does: every waiter re-reads its approval and the clock."""
        for approval_id in list(self._waiters):
            waiter = self._waiters.pop(approval_id)
            if not waiter.done():
                waiter.set_result(None)


class SessionBook:
    """The session owner the gate reports to: counts waits, persists "allow for this session"."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.waiting: Counter[str] = Counter()

    async def approval_waiting(self, session_id: str, delta: int) -> None:
        self.waiting[session_id] += delta

    async def add_session_rules(self, session_id: str, rules: list[str]) -> None:
        session = await self.store.get_session(session_id)
        session.session_rules += [r for r in rules if r not in session.session_rules]
        await self.store.save_session(session)


_SETTINGS = Settings.model_construct(read_only_auto_allow=False)
"""Settings without the environment: only the policy fields matter to the core, and reading
every OVERSEER_ variable at each restart would cost more than the restart itself."""


def policy_settings(data_dir: Path) -> Settings:
    """The host's settings as a start reads them: rules and policies from the config file."""
    config_file = data_dir / CONFIG_FILE_NAME
    written = read_yaml(config_file) if config_file.is_file() else {}
    return _SETTINGS.model_copy(
        update={
            "data_dir": data_dir,
            "config_file": config_file,
            "permissions": PermissionsConfig.model_validate(written.get("permissions") or {}),
            "policies": written.get("policies") or {},
        }
    )


@dataclass(kw_only=True)
class World:
    """One process lifetime of the core."""

    store: SqliteStore
    broker: TrackedBroker
    gate: ToolGate
    service: ApprovalService
    policy: PolicyService
    book: SessionBook
    sessions: dict[str, GateSession] = field(default_factory=dict)

    @classmethod
    async def start(cls, data_dir: Path, *, clock: Clock, tools: RecordingTools) -> World:
        store = SqliteStore(data_dir / "overseer.db")
        await store.open()
        bus = EventBus(store)
        broker = TrackedBroker(store, bus, timeout=APPROVAL_TIMEOUT, clock=clock)
        policy = PolicyService(policy_settings(data_dir))
        book = SessionBook(store)
        gate = ToolGate(policy=policy, broker=broker, store=store, bus=bus, tools=tools, sessions=book)
        tools.store = store
        world = cls(
            store=store,
            broker=broker,
            gate=gate,
            service=ApprovalService(store=store, broker=broker),
            policy=policy,
            book=book,
        )
        for session in await store.list_sessions(limit=100):
            world.sessions[session.id] = GateSession(
                session_id=session.id, workspace=Path(session.workspace), rules=list(session.session_rules)
            )
        return world

    async def add_session(self, session_id: str, workspace: Path) -> None:
        await self.store.create_session(Session(id=session_id, workspace=str(workspace)))
        self.sessions[session_id] = GateSession(session_id=session_id, workspace=workspace)

    async def shut_down(self, tasks: list[asyncio.Task[Any]]) -> None:
        """What the host does on shutdown: say so, cancel every run, close the store."""
        self.gate.shutting_down = True
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SETTLE_SECONDS)
        await quiesce(SETTLE_SECONDS)
        watch = getattr(self.broker, "watch", None)
        if watch is not None:
            await watch.close()
        await self.store.close()


def _others() -> list[asyncio.Task[Any]]:
    current = asyncio.current_task()
    return [t for t in asyncio.all_tasks() if t is not current and not t.done() and t.get_name() not in BACKGROUND_TASKS]


async def quiesce(seconds: float) -> None:
    """Wait, bounded, until no task but the background loops is left (after a shutdown)."""
    leftover = _others()
    if leftover:
        await asyncio.wait(leftover, timeout=seconds)
    leftover = _others()
    assert not leftover, f"tasks left running after shutdown: {[t.get_name() for t in leftover]}"


async def settle(world: World, tools: RecordingTools) -> None:
    """Wait, bounded, until every task is done, parked on a pending approval, or in a held tool.

    Each round waits for the store's worker to finish what was queued before it (one store read
    goes to the back of its queue), so nothing spins while the database works.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_SECONDS
    while loop.time() < deadline:
        busy = [t for t in _others() if world.broker.parked(t) is None and not tools.holds(t)]
        if not busy:
            parked = {world.broker.parked(t) for t in _others()} - {None}
            if not parked or parked <= {a.id for a in await world.store.list_approvals(status="pending")}:
                return
        await world.store.schema_version()
        await asyncio.sleep(0)
    busy = [t for t in _others() if world.broker.parked(t) is None and not tools.holds(t)]
    raise AssertionError(f"the core did not settle within {SETTLE_SECONDS} s: {[t.get_name() for t in busy]}")
