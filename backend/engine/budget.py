"""Spending budgets: a session, or the whole day, stops before a model call that would overrun.

The guard wraps each session's ModelClient: before every call (the loop's turns and memory
consolidation alike) it compares what the session has spent (its row's usage) and what the
host has spent today with `budget.per_session_usd` and `budget.daily_usd`. At `warn_at` of either
a `budget.warning` event goes out once; at the limit the call is not made: the run ends
`stopped` with `stop_reason` "budget" and a message that names the limit and how to raise it.

Today's spend is counted in memory as usage is recorded, seeded once from the day's stored
`usage` events, and starts again at midnight UTC. With several hosts on one Postgres each counts
its own runs' calls plus what it found at start: the daily limit is then per host, approximately.
The Claude Agent SDK engine makes its model calls inside Claude Code's process, where no call
passes this guard: its sessions' spend counts toward the day, but only the next LiteLLM call stops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from backend.domain.models import Session, Usage, utcnow
from backend.engine.events import EventBus
from backend.engine.models.client import ModelClient
from backend.engine.models.model_types import ModelError, ModelTurn, OnDelta, OnRetry
from backend.store.base import Store

Limit = Literal["session", "daily"]


class BudgetReached(ModelError):
    """A budget is spent: the model call was not made."""


@dataclass(kw_only=True)
class BudgetLimits:
    """The configured limits in USD (None: no limit) and the share that warns."""

    per_session_usd: float | None = None
    daily_usd: float | None = None
    warn_at: float = 0.8


def start_of_day(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


async def spent_since(store: Store, since: datetime) -> float:
    """USD of every `usage` event since `since`, across sessions (read once, to seed the day)."""
    total = 0.0
    for session in await store.list_sessions(limit=100_000):
        if session.updated_at < since:
            continue
        for event in await store.list_events(session.id):
            if event.type == "usage" and event.created_at >= since:
                total += float(event.data.get("cost_usd") or 0.0)
    return total


@dataclass(kw_only=True)
class BudgetGuard:
    """Checks the budgets before each model call and counts what each call cost."""

    limits: BudgetLimits
    store: Store
    bus: EventBus
    clock: Callable[[], datetime] = utcnow
    _day: date | None = None
    _today_usd: float = 0.0
    _warned: set[tuple[str, str]] = field(default_factory=set)
    stopped: dict[str, str] = field(default_factory=dict)
    """Sessions whose run a budget ended, with the message (the runner reads it once)."""

    @property
    def active(self) -> bool:
        return self.limits.per_session_usd is not None or self.limits.daily_usd is not None

    async def _roll(self) -> None:
        now = self.clock()
        if self._day != now.date():
            self._day = now.date()
            self._today_usd = await spent_since(self.store, start_of_day(now))
            self._warned = {w for w in self._warned if w[0] == "session"}

    async def today_usd(self) -> float:
        """What the host has spent today (UTC), as this guard counts it."""
        await self._roll()
        return self._today_usd

    async def record(self, usage: Usage) -> None:
        """A model call's cost, counted toward the day."""
        await self._roll()
        self._today_usd += usage.cost_usd

    async def check(self, session_id: str) -> None:
        """Before a model call: BudgetReached if a budget is spent; a warning event (once) past warn_at."""
        if not self.active:
            return
        await self._roll()
        session = await self.store.get_session(session_id)
        spends: list[tuple[Limit, float, float | None]] = [
            ("session", session.usage.cost_usd, self.limits.per_session_usd),
            ("daily", self._today_usd, self.limits.daily_usd),
        ]
        for limit, spent, cap in spends:
            if cap is None:
                continue
            if spent >= cap:
                message = _reached(limit, spent, cap)
                self.stopped[session_id] = message
                raise BudgetReached(message)
            key = ("session", session_id) if limit == "session" else ("daily", str(self._day))
            if spent >= cap * self.limits.warn_at and key not in self._warned:
                self._warned.add(key)
                data = {"limit": limit, "spent_usd": round(spent, 6), "budget_usd": cap, "message": _warning(limit, spent, cap)}
                await self.bus.publish(session_id, "budget.warning", data)

    def wrap(self, model_for: Callable[[Session], ModelClient]) -> Callable[[Session], ModelClient]:
        """`model_for` whose clients check the budgets before each call."""
        if not self.active:
            return model_for
        return lambda session: GuardedModel(inner=model_for(session), guard=self, session_id=session.id)


@dataclass(kw_only=True)
class GuardedModel:
    """A ModelClient that asks the guard first."""

    inner: ModelClient
    guard: BudgetGuard
    session_id: str

    async def complete(
        self, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_delta: OnDelta, on_retry: OnRetry, **extra: Any
    ) -> ModelTurn:
        await self.guard.check(self.session_id)
        return await self.inner.complete(messages=messages, tools=tools, on_delta=on_delta, on_retry=on_retry, **extra)

    def __getattr__(self, name: str) -> Any:  # model name, settings: whatever callers read of the client
        return getattr(self.inner, name)


def _reached(limit: Limit, spent: float, cap: float) -> str:
    what = "This session's budget" if limit == "session" else "Today's budget"
    key = "per_session_usd" if limit == "session" else "daily_usd"
    return (
        f"Stopped: {what} of ${cap:.2f} is spent (${spent:.2f}), so no further model call was made. "
        f"Raise budget.{key} in the configuration to go on."
    )


def _warning(limit: Limit, spent: float, cap: float) -> str:
    what = "This session" if limit == "session" else "Today"
    return f"{what} has spent ${spent:.2f} of its ${cap:.2f} budget ({spent / cap:.0%})."
