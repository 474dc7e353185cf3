"""A session stopped by a refusal, and Retry (backend/engine/outcome.py, backend/app/retry.py): a
person's denial or a timeout on the last step marks the session `stop_reason`, a step that ran
after it does not, and Retry asks the same call again through the gate."""

from __future__ import annotations

import pytest

from backend.app.retry import NotRetryable, retry_step
from backend.domain.models import Decision
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")


def shell(command: str, id: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command}, id=id)])


async def test_a_session_whose_last_step_a_person_denied_is_marked_denied_not_plainly_done(tmp_path, pool):
    script = [shell("echo hi", "c1"), Reply(text="I could not run it.")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("say hi")
        await h.answer(await h.next_approval(), Decision(kind="deny"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert (done.status, done.stop_reason) == ("completed", "denied")
        statuses = [e.data for e in await h.host.store.list_events(session.id) if e.type == "session.status"]
        assert statuses[-1]["stop_reason"] == "denied"


async def test_an_approval_that_timed_out_marks_the_session_timed_out(tmp_path, pool):
    script = [shell("echo hi", "c1"), Reply(text="No answer came.")]
    async with scripted_host(tmp_path, script, pool=pool, approval_timeout=0.2) as h:
        done = await h.run("say hi", timeout=30)
        assert (done.status, done.stop_reason) == ("completed", "timed_out")


async def test_a_step_that_ran_after_a_denial_leaves_the_session_plainly_done(tmp_path, pool):
    script = [shell("echo hi", "c1"), shell("echo other", "c2"), Reply(text="done another way")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("say hi")
        await h.answer(await h.next_approval(), Decision(kind="deny"))
        await h.answer(await h.next_approval(), Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert (done.status, done.stop_reason) == ("completed", None)


async def test_a_call_a_rule_denied_is_not_a_persons_denial_and_cannot_be_retried(tmp_path, pool):
    script = [shell("rm -rf x", "c1"), Reply(text="not allowed")]
    async with scripted_host(tmp_path, script, pool=pool, permissions={"deny": ["mcp__shell__exec(rm *)"]}) as h:
        done = await h.run("remove x", timeout=30)
        assert (done.status, done.stop_reason) == ("completed", None)
        with pytest.raises(NotRetryable):
            await retry_step(store=h.host.store, runner=h.host.runner, session_id=done.id, call_id="c1")


async def test_retry_asks_the_same_call_again_and_runs_it_when_allowed(tmp_path, pool):
    script = [shell("echo again", "c1"), Reply(text="denied, so I stop"), Reply(text="it printed again")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("echo")
        first = await h.next_approval()
        await h.answer(first, Decision(kind="deny"))
        assert (await h.host.runner.wait(session.id, timeout=30)).stop_reason == "denied"

        running = await retry_step(store=h.host.store, runner=h.host.runner, session_id=session.id, call_id="c1")
        assert running.status in ("running", "waiting_approval") and running.stop_reason is None
        second = await h.next_approval()
        assert (second.tool_name, second.arguments) == (first.tool_name, first.arguments)
        assert second.tool_call_id != first.tool_call_id
        # The model was not asked again to propose it: two calls so far, the retry costs none.
        assert len(h.model.requests) == 2
        await h.answer(second, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert (done.status, done.stop_reason) == ("completed", None)
        assert "again" in h.model.last_request.last_tool_results()[0]
        records = {r.id: r.status for r in await h.host.store.list_tool_calls(session.id)}
        assert records == {"c1": "denied", second.tool_call_id: "done"}


async def test_the_retry_request_in_the_transcript_names_the_tool_by_its_title_not_its_internal_name(tmp_path, pool):
    script = [shell("echo again", "c1"), Reply(text="denied, so I stop"), Reply(text="done")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("echo")
        await h.answer(await h.next_approval(), Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        await retry_step(store=h.host.store, runner=h.host.runner, session_id=session.id, call_id="c1")
        await h.answer(await h.next_approval(), Decision(kind="allow_once"))
        await h.host.runner.wait(session.id, timeout=30)
        asked = [m.content for m in await h.host.store.list_messages(session.id) if m.role == "user"][-1]
        assert asked == "Try that step again: the “Run a command” call that was denied. It will ask for approval again."


async def test_retry_is_refused_while_the_session_runs_and_for_a_call_that_ran(tmp_path, pool):
    script = [shell("echo a", "c1"), shell("echo b", "c2"), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("echo")
        await h.answer(await h.next_approval(), Decision(kind="allow_once"))
        second = await h.next_approval()
        with pytest.raises(NotRetryable, match="still running"):
            await retry_step(store=h.host.store, runner=h.host.runner, session_id=session.id, call_id="c1")
        await h.answer(second, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        with pytest.raises(NotRetryable, match="denied"):
            await retry_step(store=h.host.store, runner=h.host.runner, session_id=session.id, call_id="c1")
        assert len(h.model.requests) == 3
