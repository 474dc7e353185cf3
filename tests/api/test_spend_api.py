"""GET /api/spend (backend/app/spend.py): totals today, this month and by model from the usage
records, and the budgets in force."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Usage

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_spend_adds_up_the_sessions_usage_today_this_month_and_by_model(api):
    runner = api.host.runner
    one = await runner.create(options=SessionOptions(title="one", model="openai/a"))
    two = await runner.create(options=SessionOptions(title="two", model="openai/b"))
    three = await runner.create(options=SessionOptions(title="three", model="openai/b"))
    await runner.add_usage(one.id, Usage(input_tokens=100, output_tokens=10, cost_usd=0.25))
    await runner.add_usage(two.id, Usage(input_tokens=50, output_tokens=5, cost_usd=0.5))
    await runner.add_usage(three.id, Usage(input_tokens=1, output_tokens=1, cost_usd=0.25))
    response = await api.client.get("/api/spend")
    assert response.status_code == 200
    spent = response.json()
    assert spent["today_usd"] == pytest.approx(1.0) and spent["month_usd"] == pytest.approx(1.0)
    assert spent["total_usd"] == pytest.approx(1.0)
    by_model = {m["model"]: m for m in spent["by_model"]}
    assert by_model["openai/b"] == {"model": "openai/b", "sessions": 2, "input_tokens": 51, "output_tokens": 6, "cost_usd": 0.75}
    assert spent["by_model"][0]["model"] == "openai/b"  # most expensive first
    assert (spent["per_session_usd"], spent["daily_usd"]) == (None, None)


async def test_spend_needs_a_signed_in_caller(api):
    assert (await api.anonymous.get("/api/spend")).status_code == 401
