"""GET /api/spend: what the model calls cost, today, this month, in total and by model; PUT
/api/spend/budgets: an admin changes the budgets (written to the config file, in force at once)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from backend.api.deps import Admin, Services, Viewer
from backend.app.spend import Spend

router = APIRouter(prefix="/api/spend", tags=["spend"])

MAX_BUDGET_USD = 1_000_000.0


class BudgetsIn(BaseModel):
    """The budgets in USD; null: no limit."""

    # strict: a JSON number, as the schema says (lax, `true` and "5" passed as 1.0 and 5.0)
    per_session_usd: float | None = Field(None, gt=0, le=MAX_BUDGET_USD, allow_inf_nan=False, strict=True)
    daily_usd: float | None = Field(None, gt=0, le=MAX_BUDGET_USD, allow_inf_nan=False, strict=True)
    """Across every session of the host, per UTC day."""


@router.get("")
async def get_spend(services: Services, _: Viewer) -> Spend:
    """Spend today and this month (UTC, from the usage records), in total and by model, and the budgets."""
    report = await services.spend.now()
    report.config_file = str(services.settings.writable_config_file)
    return report


@router.put("/budgets")
async def put_budgets(body: BudgetsIn, services: Services, _: Admin) -> Spend:
    """Set the budgets: written to `budget:` of the config file (its comments and formatting kept)
    and checked from the next model call of every session on."""
    settings = services.settings
    report = await services.spend.set_budgets(
        per_session_usd=body.per_session_usd,
        daily_usd=body.daily_usd,
        config_file=settings.writable_config_file,
        trust=settings.trust_store,
    )
    report.config_file = str(settings.writable_config_file)
    return report
