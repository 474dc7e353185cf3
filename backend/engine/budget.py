"""Spending budgets: a session, or the whole day, stops before a model call that would overrun.

The guard wraps each session's ModelClient: before every call (the loop's turns and memory
consolidation alike) it compares what the session has spent (its row's usage) and what the
host has spent today with `budget.per_session_usd` and `budget.daily_usd`. At `warn_at` of either
a `budget.warning` event goes out once; at the limit the call is not made: the run ends
`stopped` with `stop_reason` "budget" and a message that names the limit and how to raise it.

Today's spend is counted in memory as usage is recorded, seeded once from the day's stored
`usage` events, and starts again at midnight UTC. With several hosts on one Postgres each counts
its own runs' calls plus what it found at start: the daily limit is then per host, approximately.
Before a call is made its cost is estimated (backend/engine/models/call_estimate.py: the prompt
counted, the answer at the most it may be, at the model's prices): a call whose answer would not
fit in what is left has its `max_tokens` lowered to what is left can pay for, and a call that
could not even pay for its prompt and `MIN_ANSWER_TOKENS` of answer is not made. Lowering rather
than refusing whenever the worst case does not fit: a model's largest answer alone (64,000 tokens
of Claude Sonnet: $0.96) can outprice a whole small budget, which would then stop every call.

The Claude Agent SDK engine makes its model calls inside Claude Code's process, where no call
passes this guard and the SDK offers no hook before one (its `max_budget_usd` ends a query only
after the query has spent past it): its sessions' spend counts toward the day, and a run of theirs
does not start once a budget is spent (the runner checks), but within a run nothing is estimated.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from backend.domain.models import Session, Usage, utcnow
from backend.engine.events import EventBus
from backend.engine.models.call_estimate import CallEstimate, estimate_call, output_limit_param
from backend.engine.models.client import LiteLLMClient, ModelClient
from backend.engine.models.model_types import ModelError, ModelTurn, OnDelta, OnRetry
from backend.store.base import Store

Limit = Literal["session", "daily"]

MIN_ANSWER_TOKENS = 1024
"""A call is made only if what is left pays for its prompt and at least this many answer tokens
(plus the thinking budget when thinking is on): a shorter answer is rarely worth the prompt."""


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

    def set_limits(self, *, per_session_usd: float | None, daily_usd: float | None) -> None:
        """New limits, in force from the next model call (an admin's change from the dashboard);
        the warnings given start over, so a raised budget warns again at its own `warn_at`."""
        self.limits.per_session_usd = per_session_usd
        self.limits.daily_usd = daily_usd
        self._warned.clear()

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

    async def _spends(self, session_id: str) -> list[tuple[Limit, float, float]]:
        """(limit, spent, cap) of each budget set."""
        await self._roll()
        session = await self.store.get_session(session_id)
        spends: list[tuple[Limit, float, float | None]] = [
            ("session", session.usage.cost_usd, self.limits.per_session_usd),
            ("daily", self._today_usd, self.limits.daily_usd),
        ]
        return [(limit, spent, cap) for limit, spent, cap in spends if cap is not None]

    async def check(self, session_id: str) -> None:
        """Before a model call: BudgetReached if a budget is spent; a warning event (once) past warn_at."""
        if not self.active:
            return
        for limit, spent, cap in await self._spends(session_id):
            if spent >= cap:
                message = _reached(limit, spent, cap)
                self.stopped[session_id] = message
                raise BudgetReached(message)
            key = ("session", session_id) if limit == "session" else ("daily", str(self._day))
            if spent >= cap * self.limits.warn_at and key not in self._warned:
                self._warned.add(key)
                data = {"limit": limit, "spent_usd": round(spent, 6), "budget_usd": cap, "message": _warning(limit, spent, cap)}
                await self.bus.publish(session_id, "budget.warning", data)

    async def fit(self, session_id: str, client: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelClient:
        """Before a model call: `check`, then the client to call, its `max_tokens` lowered to what
        is left of the tightest budget if its answer could cost more; BudgetReached if what is left
        cannot pay for the prompt and a short answer. A client of unknown make is checked only."""
        await self.check(session_id)
        if not self.active or not isinstance(client, LiteLLMClient):
            return client
        left = min(((cap - spent, limit, spent, cap) for limit, spent, cap in await self._spends(session_id)), key=lambda t: t[0])
        usd, limit, spent, cap = left
        key = next((k for k in ("max_tokens", "max_completion_tokens") if client.extra.get(k)), None)
        asked = int(client.extra[key]) if key else None
        # Counting a long transcript's tokens is CPU work: off the event loop.
        estimates = await asyncio.to_thread(
            lambda: [estimate_call(m, messages, tools, max_tokens=asked) for m in [client.model, *client.fallback_models]]
        )
        affordable = [n for e in estimates if (n := e.answer_tokens_for(usd)) is not None]
        if not affordable:
            return client  # answers cost nothing (a model the price map does not know)
        tokens = min(affordable)
        if tokens >= max(e.max_output_tokens for e in estimates):
            return client
        thinking = client.thinking.budget_tokens if client.thinking is not None and client.thinking.enabled else 0
        if tokens < MIN_ANSWER_TOKENS + thinking:
            priciest = max(estimates, key=lambda e: e.prompt_usd + MIN_ANSWER_TOKENS * e.output_usd_per_token)
            message = _too_dear(limit, spent, cap, priciest, MIN_ANSWER_TOKENS + thinking)
            self.stopped[session_id] = message
            raise BudgetReached(message)
        extra = {k: v for k, v in client.extra.items() if k not in ("max_tokens", "max_completion_tokens")}
        extra[output_limit_param(client.model)] = tokens
        return dataclasses.replace(client, extra=extra)

    def wrap(self, model_for: Callable[[Session], ModelClient]) -> Callable[[Session], ModelClient]:
        """`model_for` whose clients check the budgets before each call (wrapped even with no budget
        set: an admin may set one from the dashboard while the host runs)."""
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
        client = await self.guard.fit(self.session_id, self.inner, messages, tools)
        return await client.complete(messages=messages, tools=tools, on_delta=on_delta, on_retry=on_retry, **extra)

    def __getattr__(self, name: str) -> Any:  # model name, settings: whatever callers read of the client
        return getattr(self.inner, name)


def _reached(limit: Limit, spent: float, cap: float) -> str:
    what = "This session's budget" if limit == "session" else "Today's budget"
    key = "per_session_usd" if limit == "session" else "daily_usd"
    return (
        f"Stopped: {what} of ${cap:.2f} is spent (${spent:.2f}), so no further model call was made. "
        f"Raise budget.{key} in Settings → Spend or the configuration to go on."
    )


def _too_dear(limit: Limit, spent: float, cap: float, estimate: CallEstimate, answer_tokens: int) -> str:
    what = "this session's budget" if limit == "session" else "today's budget"
    key = "per_session_usd" if limit == "session" else "daily_usd"
    least = estimate.prompt_usd + answer_tokens * estimate.output_usd_per_token
    return (
        f"Stopped: the next model call would cost at least ${least:.4f} ({estimate.prompt_tokens:,} prompt tokens and "
        f"{answer_tokens:,} answer tokens at {estimate.model}'s prices), more than the ${max(cap - spent, 0):.4f} left "
        f"of {what} of ${cap:.2f}, so it was not made. Raise budget.{key} in Settings → Spend or the configuration to go on."
    )


def _warning(limit: Limit, spent: float, cap: float) -> str:
    what = "This session" if limit == "session" else "Today"
    return f"{what} has spent ${spent:.2f} of its ${cap:.2f} budget ({spent / cap:.0%})."
