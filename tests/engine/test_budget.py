"""Spending budgets (backend/engine/budget.py): past a budget the model is not called and the
session stops with stop_reason "budget" and a message; at 80% a warning goes out once."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Usage
from backend.app.chat import ChatInput
from backend.engine.models.call_estimate import count_prompt_tokens
from backend.testing import ModelRequest, Reply
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


# Before the call: its cost estimated at the model's prices (LiteLLM's local map), so one call
# cannot overshoot the budget (a $0.50 budget once ended at $1.20). openai/gpt-4o, priced in the
# map at $2.50 / $10 per million tokens in / out, answers from the scripted server here.
PRICED = "openai/gpt-4o"
OUT_PRICE = 10 / 1_000_000


def answer_limit(request) -> int | None:
    return request.raw.get("max_tokens") or request.raw.get("max_completion_tokens")


async def test_a_call_whose_answer_could_pass_the_budget_is_sent_with_max_tokens_it_can_pay_for(tmp_path):
    def answer_in_full(request: ModelRequest) -> Reply:
        # The model answers with every token it may, its prompt counted as a real tokenizer does.
        prompt = count_prompt_tokens(PRICED, request.messages, request.tools)
        return Reply(text="long", usage=(prompt, answer_limit(request) or 16_384))

    async with scripted_host(tmp_path, answer_in_full, budget={"per_session_usd": 0.05}, **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s", model=PRICED))
        await h.host.runner.add_usage(session.id, Usage(cost_usd=0.01))
        await h.host.sessions.submit(session.id, ChatInput(text="hello"))
        done = await h.host.runner.wait(session.id, timeout=30)
    assert (done.status, done.stop_reason) == ("completed", None)
    [request] = h.model.requests
    limit = answer_limit(request)
    # $0.04 left pays for at most 4,000 answer tokens; the prompt takes a little of it.
    assert limit is not None and 3_000 < limit < 4_000
    # Without the cap this answer (16,384 tokens, $0.16) would have ended the session at $0.17.
    assert done.usage.cost_usd <= 0.05


async def test_a_call_the_budget_can_pay_in_full_is_sent_as_it_was(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="ok")], budget={"per_session_usd": 5.0}, **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s", model=PRICED))
        await h.host.sessions.submit(session.id, ChatInput(text="hello"))
        await h.host.runner.wait(session.id, timeout=30)
    [request] = h.model.requests
    assert answer_limit(request) is None  # 16,384 tokens at most: $0.16, well within $5


async def test_a_call_that_could_not_pay_for_a_short_answer_is_not_made_and_says_why(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="never")], budget={"per_session_usd": 0.5}, **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s", model=PRICED))
        await h.host.runner.add_usage(session.id, Usage(cost_usd=0.495))  # $0.005 left: 500 answer tokens
        await h.host.sessions.submit(session.id, ChatInput(text="hello"))
        stopped = await h.host.runner.wait(session.id, timeout=30)
    assert (stopped.status, stopped.stop_reason) == ("stopped", "budget")
    assert h.model.requests == []
    assert "would cost at least" in (stopped.error or "") and "budget.per_session_usd" in stopped.error
    assert "gpt-4o" in stopped.error


async def test_the_daily_budget_caps_the_answer_when_it_is_the_tighter_one(tmp_path):
    budget = {"per_session_usd": 10.0, "daily_usd": 0.03}
    async with scripted_host(tmp_path, [Reply(text="short")], budget=budget, **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s", model=PRICED))
        await h.host.sessions.submit(session.id, ChatInput(text="hello"))
        await h.host.runner.wait(session.id, timeout=30)
    [request] = h.model.requests
    limit = answer_limit(request)
    assert limit is not None and 2_000 < limit < 3_000


async def test_a_budget_set_while_the_host_runs_applies_to_the_next_call(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="a")], **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="s", model=PRICED))
        await h.host.runner.add_usage(session.id, Usage(cost_usd=0.6))
        h.host.budget.limits.per_session_usd = 0.5
        await h.host.sessions.submit(session.id, ChatInput(text="hello"))
        stopped = await h.host.runner.wait(session.id, timeout=30)
    assert (stopped.status, stopped.stop_reason) == ("stopped", "budget")
    assert h.model.requests == []


async def test_a_claude_sdk_session_past_its_budget_does_not_start_a_run(tmp_path):
    # Claude Code makes its model calls itself, past the guard; the run is stopped before it starts.
    budget = {"per_session_usd": 0.5}
    async with scripted_host(tmp_path, [Reply(text="never")], budget=budget, default_engine="claude-sdk", **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="sdk"))
        assert session.engine == "claude-sdk"
        await h.host.runner.add_usage(session.id, Usage(cost_usd=0.6))
        await h.host.sessions.submit(session.id, ChatInput(text="go on"))
        stopped = await h.host.runner.wait(session.id, timeout=30)
    assert (stopped.status, stopped.stop_reason) == ("stopped", "budget")
    assert "budget of $0.50 is spent" in (stopped.error or "")
    assert h.model.requests == []
