"""Spending budgets (backend/engine/budget.py): past a budget the model is not called and the
session stops with stop_reason "budget" and a message; at 80% a warning goes out once."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Usage
from backend.app.chat import ChatInput
from backend.testing import Reply
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_SERVERS = {"builtin_servers": False}


async def test_a_session_past_its_budget_stops_without_calling_the_model(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="first")], budget={"per_session_usd": 0.5}, **NO_SERVERS) as h:
        done = await h.run("one", timeout=30)
        assert done.status == "completed" and len(h.model.requests) == 1
        await h.host.runner.add_usage(done.id, Usage(input_tokens=10, output_tokens=10, cost_usd=0.6))
        await h.host.sessions.submit(done.id, ChatInput(text="two"))
        stopped = await h.host.runner.wait(done.id, timeout=30)
        assert (stopped.status, stopped.stop_reason) == ("stopped", "budget")
        assert "budget of $0.50 is spent" in (stopped.error or "") and "per_session_usd" in stopped.error
        assert len(h.model.requests) == 1  # the model was not called past the budget


async def test_the_day_past_its_budget_stops_every_session_before_its_model_call(tmp_path):
    async with scripted_host(tmp_path, [], budget={"daily_usd": 1.0}, **NO_SERVERS) as h:
        spender = await h.host.runner.create(options=SessionOptions(title="spender"))
        await h.host.runner.add_usage(spender.id, Usage(cost_usd=1.2))
        stopped = await h.run("anything", timeout=30)
        assert (stopped.status, stopped.stop_reason) == ("stopped", "budget")
        assert "Today's budget of $1.00" in (stopped.error or "")
        assert h.model.requests == []


async def test_a_warning_goes_out_once_at_eighty_percent_and_the_call_is_made(tmp_path):
    script = [Reply(text="a"), Reply(text="b")]
    async with scripted_host(tmp_path, script, budget={"per_session_usd": 1.0}, **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s"))
        await h.host.runner.add_usage(session.id, Usage(cost_usd=0.85))
        await h.host.sessions.submit(session.id, ChatInput(text="one"))
        await h.host.runner.wait(session.id, timeout=30)
        await h.host.sessions.submit(session.id, ChatInput(text="two"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert (done.status, done.stop_reason) == ("completed", None)
        assert len(h.model.requests) == 2
        warnings = [e.data for e in await h.host.store.list_events(session.id) if e.type == "budget.warning"]
        assert len(warnings) == 1
        assert warnings[0]["limit"] == "session" and warnings[0]["budget_usd"] == 1.0
        assert "85%" in warnings[0]["message"]


async def test_without_budgets_nothing_is_checked(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="ok")], **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s"))
        await h.host.runner.add_usage(session.id, Usage(cost_usd=1000.0))
        await h.host.sessions.submit(session.id, ChatInput(text="go"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert (done.status, done.stop_reason) == ("completed", None)
