"""The writes of a session's row besides starting and ending runs' tasks: status while approvals
wait, a run's outcome, usage and spend, session rules, found tools, a person's edits, `/new`.

Every write decides on the row as stored, in one store transaction (`Store.change_session`), under
a per-session lock here so that events go out in the order of the writes. The runner extends this
class; its callers (the app, the gate's SessionSink, the engines) reach these through it.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from backend.domain.errors import StorageUnavailable
from backend.domain.models import ACTIVE_STATUSES, Session, SessionStatus, Usage
from backend.domain.redact import redact
from backend.engine.budget import BudgetGuard
from backend.engine.events import EventBus
from backend.engine.loop import LoopResult
from backend.engine.outcome import denied_stop_reason
from backend.store.base import SessionDecision, Store

log = logging.getLogger(__name__)

STORAGE_RETRY_LIMIT = 30.0
"""The longest wait (seconds) between two tries of a write the store refused for want of room."""


class SessionRows:
    """Writes session rows for the runner: one decision per store transaction."""

    def __init__(
        self, *, store: Store, bus: EventBus, budget: BudgetGuard | None = None, secrets: Sequence[str] = ()
    ) -> None:
        """`secrets` (the provider's API key, ...) never appear in a stored error or its event."""
        self.store = store
        self.bus = bus
        self.budget = budget
        """Spending limits checked before each model call (None: none); see backend/engine/budget.py."""
        self.secrets = tuple(secrets)
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}
        """Open approvals per running session; the status follows the count."""
        self._background: set[asyncio.Task[None]] = set()
        self.storage_retry = 0.5
        """The first wait (seconds) before a write the store refused (a full disk) is tried again;
        each next wait doubles, up to STORAGE_RETRY_LIMIT."""

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    async def _update(self, session_id: str, **changes: object) -> Session:
        return await self._change(session_id, lambda _: changes)

    async def _change(self, session_id: str, decide: SessionDecision) -> Session:
        """Decide and write in one store transaction, under the session's lock so that the status
        events go out in the order of the writes.

        The decision is always made on the row as stored, never on a copy kept here: on a shared
        Postgres a person's rename, archive or auto-approve reaches the host they asked, not
        necessarily the one running the session, and a copy would write their change back out."""
        async with self._lock(session_id):
            before, after = await self.store.change_session(session_id, decide)
            if after is None:
                return before
            if after.status != before.status:
                await self.bus.publish(
                    session_id,
                    "session.status",
                    {"status": after.status, "error": after.error, "stop_reason": after.stop_reason},
                )
        return after

    async def approval_waiting(self, session_id: str, delta: int) -> None:
        """Count a session's open approvals; its status follows the count.

        Going up is written before the approval is visible. Going down is written in the
        background: the decision must reach the tool without waiting on a status row.
        """
        self._waiting[session_id] = max(self._waiting.get(session_id, 0) + delta, 0)
        if delta > 0:
            await self._sync_waiting_status(session_id)
        else:
            task = asyncio.create_task(self._sync_waiting_status(session_id))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _sync_waiting_status(self, session_id: str) -> None:
        def decide(session: Session) -> dict[str, object] | None:
            if session.status not in ACTIVE_STATUSES:
                return None
            wanted: SessionStatus = "waiting_approval" if self._waiting.get(session_id, 0) > 0 else "running"
            return {"status": wanted} if session.status != wanted else None

        await self._change(session_id, decide)

    async def add_session_rules(self, session_id: str, rules: list[str]) -> None:
        await self._change(
            session_id,
            lambda s: {"session_rules": s.session_rules + [r for r in rules if r not in s.session_rules]},
        )

    async def add_found_tools(self, session_id: str, names: list[str]) -> None:
        """Keep the tools `search_tools` found on the session row, so they stay offered after a restart."""
        await self._change(
            session_id,
            lambda s: {"found_tools": s.found_tools + new} if (new := [n for n in names if n not in s.found_tools]) else None,
        )

    async def edit(self, session_id: str, decide: SessionDecision) -> Session:
        """A person's change to a session's own settings (title, archived, auto-approve), under its
        lock like every other write, announced as `session.updated` with the fields that changed.
        `decide` may raise to refuse the change in view of the session as it is now."""
        changed: list[str] = []

        def deciding(session: Session) -> dict[str, object] | None:
            changes = decide(session)
            changed[:] = changes or {}  # the last decision is the one written
            return changes

        session = await self._change(session_id, deciding)
        if changed:
            dumped = session.model_dump(mode="json", include={*changed, "updated_at"})
            await self.bus.publish(session_id, "session.updated", dumped)
        return session

    async def add_usage(self, session_id: str, usage: Usage) -> None:
        await self._change(session_id, lambda s: {"usage": s.usage.plus(usage)})
        if self.budget is not None:
            await self.budget.record(usage)
        await self.bus.publish(session_id, "usage", usage.model_dump())

    async def clear_history(self, session_id: str, start: int) -> Session:
        """`/new`: the model sees messages from idx `start` on; the older ones stay in the transcript."""
        # The SDK engine's CLI keeps its own transcript: clearing starts a new one.
        session = await self._change(
            session_id, lambda s: {"memory_from": start, "sdk_session_id": None} if start > s.memory_from else None
        )
        await self.bus.publish(session_id, "session.cleared", {"from": start})
        return session

    async def record_outcome(self, session_id: str, result: LoopResult) -> None:
        """Write how a run ended: its status, its error (secrets redacted) and why it stopped."""
        status: SessionStatus = result.outcome
        error = redact(result.error, self.secrets) if result.error else result.error
        reason = result.stop_reason
        if self.budget is not None and session_id in self.budget.stopped:
            status, reason = "stopped", "budget"  # not a failure: the limit did its job
            self.budget.stopped.pop(session_id)
        if status == "completed":  # answered, but maybe around a step a person refused
            reason = await denied_stop_reason(self.store, session_id)
        await self._update(session_id, status=status, error=error, stop_reason=reason)
        if error:
            await self.bus.publish(session_id, "error", {"message": error})

    async def record_failure(self, session_id: str, exc: Exception) -> None:
        """A run that raised ends `error`, with what it raised (secrets redacted) as the error.

        A run the store stopped (a full disk, a read-only database) ends `error` with the reason
        ("the disk is full"). That end is itself a write: it is tried again, with growing waits,
        until the store takes it, so once the room is back the session says what happened and
        never stays `running` with nobody running it. Meanwhile watchers are told at once, by an
        event that is not stored. A stop ends the waiting (the stop's own write is then refused
        the same way, and says so)."""
        if isinstance(exc, StorageUnavailable):
            message = exc.reason
        else:
            message = redact(f"Internal error: {type(exc).__name__}: {exc}", self.secrets)

        async def write() -> None:
            await self._update(session_id, status="error", error=message)
            await self.bus.publish(session_id, "error", {"message": message})

        await self._until_stored(session_id, write)

    async def _until_stored(self, session_id: str, write: Callable[[], Awaitable[None]]) -> None:
        """Do `write`, trying again while the store refuses it as unavailable."""
        wait = self.storage_retry
        told = False
        while True:
            try:
                return await write()
            except StorageUnavailable as exc:
                if not told:
                    told = True
                    log.error("session %s: cannot save (%s); trying again until it can", session_id, exc.reason)
                    note = f"Cannot save the session: {exc.reason}. It ends once there is room again."
                    await self.bus.publish_delta(session_id, "error", {"message": note})
            await asyncio.sleep(wait)
            wait = min(wait * 2, STORAGE_RETRY_LIMIT)
