"""GET /api/spend (backend/app/spend.py): totals today, this month and by model from the usage
records, and the budgets in force; PUT /api/spend/budgets: an admin changes them."""

from __future__ import annotations

import pytest
import yaml

from backend.domain.models import Usage
from backend.domain.session_options import SessionOptions
from tests.api.conftest import serve_api

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


CONFIG = """\
# Team budgets: agreed with finance, keep this comment.
budget:
  per_session_usd: 0.50   # a session
  warn_at: 0.8
model_retries: 1
"""


async def test_an_admin_changes_the_budgets_in_the_file_it_keeps_and_they_apply_at_once(tmp_path, pool, monkeypatch):
    config = tmp_path / "overseer.yaml"
    config.write_text(CONFIG)
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    async with serve_api(tmp_path, pool) as api:
        before = (await api.client.get("/api/spend")).json()
        assert (before["per_session_usd"], before["daily_usd"]) == (0.5, None)
        assert before["config_file"] == str(config)
        response = await api.client.put("/api/spend/budgets", json={"per_session_usd": 0.5, "daily_usd": 2.25})
        assert response.status_code == 200, response.text
        assert (response.json()["per_session_usd"], response.json()["daily_usd"]) == (0.5, 2.25)
        limits = api.host.budget.limits
        assert (limits.per_session_usd, limits.daily_usd) == (0.5, 2.25)
        # Only what changed is written: the comment, 0.50 as spelt, its note and the order stay.
        assert config.read_text() == CONFIG.replace("  warn_at: 0.8\n", "  warn_at: 0.8\n  daily_usd: 2.25\n")
        raised = await api.client.put("/api/spend/budgets", json={"per_session_usd": 1.5, "daily_usd": None})
        assert (raised.json()["per_session_usd"], raised.json()["daily_usd"]) == (1.5, None)
    assert yaml.safe_load(config.read_text())["budget"] == {"per_session_usd": 1.5, "warn_at": 0.8}
    assert config.read_text().startswith("# Team budgets: agreed with finance, keep this comment.\n")


async def test_budgets_removed_leave_no_budget_section_and_no_limit(tmp_path, pool, monkeypatch):
    config = tmp_path / "overseer.yaml"
    config.write_text("budget:\n  daily_usd: 3\nmodel_retries: 1\n")
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    async with serve_api(tmp_path, pool) as api:
        response = await api.client.put("/api/spend/budgets", json={"per_session_usd": None, "daily_usd": None})
        assert response.status_code == 200
        assert not api.host.budget.active
    assert config.read_text() == "model_retries: 1\n"


async def test_a_budget_must_be_a_positive_finite_amount_and_a_refused_one_changes_nothing(tmp_path, pool, monkeypatch):
    config = tmp_path / "overseer.yaml"
    config.write_text(CONFIG)
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    async with serve_api(tmp_path, pool) as api:
        # A number only: not `true` nor "5" (read as 1.0 and 5.0 before, against the schema).
        for bad in (0, -1, "lots", 1e12, True, "5", "2.5"):
            response = await api.client.put("/api/spend/budgets", json={"per_session_usd": bad})
            assert response.status_code == 422, bad
        # JSON has no infinity; Python's encoder writes one anyway, as a careless client might.
        response = await api.client.put(
            "/api/spend/budgets", content=b'{"daily_usd": Infinity}', headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 422
        assert api.host.budget.limits.per_session_usd == 0.5
    assert config.read_text() == CONFIG


async def test_only_an_admin_may_change_the_budgets(api):
    viewer = {"X-API-Key": api.app.state.auth.create_api_key("viewer-key", role="viewer")}
    approver = {"X-API-Key": api.app.state.auth.create_api_key("approver-key", role="approver")}
    for headers in (viewer, approver):
        response = await api.anonymous.put("/api/spend/budgets", json={"daily_usd": 5}, headers=headers)
        assert response.status_code == 403
    assert api.host.budget.limits.daily_usd is None
