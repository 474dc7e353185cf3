"""Spend: what the sessions' model calls cost, today, this month, in total and by model, with the
budgets in force (from the token and cost records the store already keeps)."""

from __future__ import annotations

from pydantic import BaseModel

from backend.engine.budget import BudgetGuard, spent_since, start_of_day
from backend.store.base import Store


class ModelSpend(BaseModel):
    model: str
    sessions: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


class Spend(BaseModel):
    """Totals in USD; `by_model` from each session's usage, most expensive first."""

    today_usd: float
    month_usd: float
    total_usd: float
    by_model: list[ModelSpend]
    per_session_usd: float | None
    daily_usd: float | None


async def spend(store: Store, guard: BudgetGuard) -> Spend:
    """Today and this month (UTC) from the stored `usage` events; totals from the sessions' rows."""
    now = guard.clock()
    today = start_of_day(now)
    by_model: dict[str, ModelSpend] = {}
    for session in await store.list_sessions(limit=100_000):
        row = by_model.setdefault(
            session.model, ModelSpend(model=session.model, sessions=0, input_tokens=0, output_tokens=0, cost_usd=0.0)
        )
        row.sessions += 1
        row.input_tokens += session.usage.input_tokens
        row.output_tokens += session.usage.output_tokens
        row.cost_usd += session.usage.cost_usd
    models = sorted(by_model.values(), key=lambda m: (-m.cost_usd, m.model))
    return Spend(
        today_usd=await spent_since(store, today),
        month_usd=await spent_since(store, today.replace(day=1)),
        total_usd=sum(m.cost_usd for m in models),
        by_model=models,
        per_session_usd=guard.limits.per_session_usd,
        daily_usd=guard.limits.daily_usd,
    )


class SpendReport:
    """What the model calls cost, for GET /api/spend."""

    def __init__(self, store: Store, guard: BudgetGuard) -> None:
        self._store = store
        self._guard = guard

    async def now(self) -> Spend:
        return await spend(self._store, self._guard)
