"""GET /api/spend: what the model calls cost, today, this month, in total and by model."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Services, Viewer
from backend.app.spend import Spend

router = APIRouter(prefix="/api/spend", tags=["spend"])


@router.get("")
async def get_spend(services: Services, _: Viewer) -> Spend:
    """Spend today and this month (UTC, from the usage records), in total and by model, and the budgets."""
    return await services.spend.now()
