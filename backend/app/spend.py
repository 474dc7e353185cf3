"""Spend: what the sessions' model calls cost, today, this month, in total and by model, with the
budgets in force (from the token and cost records the store already keeps); and the budgets as
an admin changes them from the dashboard.

A change is written to the config file by its one writer (update_config_file: comments, order and
number spelling kept) and applied to the running guard at once, so the next model call of every
session is checked against it; no restart.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from backend.config import BudgetConfig, update_config_file
from backend.engine.budget import BudgetGuard, spent_since, start_of_day
from backend.store.base import Store
from backend.workspace_trust import TrustStore


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
    config_file: str | None = None
    """Where a change of the budgets is written (the config file in use, else the data dir's)."""


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
    """What the model calls cost, for GET /api/spend; the budgets, for PUT /api/spend/budgets."""

    def __init__(self, store: Store, guard: BudgetGuard) -> None:
        self._store = store
        self._guard = guard
        self._lock = threading.Lock()  # the read-modify-write of the config file

    async def now(self) -> Spend:
        return await spend(self._store, self._guard)

    async def set_budgets(
        self, *, per_session_usd: float | None, daily_usd: float | None, config_file: Path, trust: TrustStore | None
    ) -> Spend:
        """Write the budgets (None: no limit) to `budget:` of `config_file`, then apply them
        (`trust`: a trusted workspace config stays trusted, as for every admin's change)."""
        BudgetConfig(per_session_usd=per_session_usd, daily_usd=daily_usd, warn_at=self._guard.limits.warn_at)
        with self._lock:
            update_config_file(
                config_file,
                lambda data: _set_budget(data, per_session_usd=per_session_usd, daily_usd=daily_usd),
                trust=trust,
            )
            self._guard.set_limits(per_session_usd=per_session_usd, daily_usd=daily_usd)
        return await self.now()


def _set_budget(data: dict[str, Any], *, per_session_usd: float | None, daily_usd: float | None) -> None:
    """`budget:` with these limits; a limit of None is removed, and so is an empty `budget:`.
    A value the file has already (0.50 for 0.5) is left as it is spelt."""
    budget = dict(data.get("budget") or {})
    for key, value in (("per_session_usd", per_session_usd), ("daily_usd", daily_usd)):
        if value is None:
            budget.pop(key, None)
        else:
            budget[key] = value
    if budget:
        data["budget"] = budget
    else:
        data.pop("budget", None)
