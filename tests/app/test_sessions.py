"""The session service (backend/app/sessions.py): create, invoke (nesting, the depth limit, forks),
stop and delete reaching sub-agents and approvals, the last answer, and a session's family."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.app.sessions import DELETED, DepthLimitExceeded
from backend.domain.models import Decision
from backend.app.chat import ChatInput
from backend.engine.runner import SessionBusy
from backend.domain.errors import ApprovalClosed
from backend.store.base import NotFound
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_SERVERS = {"builtin_servers": False}


def write(path: str) -> Reply:
    call = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "x"})
    return Reply(tool_calls=[call])


async def test_a_first_message_titles_the_new_session_and_starts_it(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="hello")], **NO_SERVERS) as h:
        created = await h.host.sessions.create(first=ChatInput(text="say hello\nand nothing else"))
        assert created.session.title == "say hello"
        assert created.first is not None and created.first.idx == 0
        done = await h.host.runner.wait(created.session.id, timeout=60)
        assert done.status == "completed"
        assert await h.host.sessions.last_answer(done.id) == "hello"


async def test_a_refused_first_message_leaves_no_session(tmp_path):
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        with pytest.raises(ValueError, match="not a command or a skill"):
            await h.host.sessions.create(first=ChatInput(text="/no-such-skill do it"))
        assert await h.host.store.list_sessions() == []


async def test_the_last_answer_is_the_last_assistant_text_and_empty_before_any(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="first"), Reply(text="second")], **NO_SERVERS) as h:
        idle = (await h.host.sessions.create(options=SessionOptions(title="idle"))).session
        assert await h.host.sessions.last_answer(idle.id) == ""
        session = await h.run("one", timeout=60)
        await h.host.sessions.submit(session.id, ChatInput(text="two"))
        await h.host.runner.wait(session.id, timeout=60)
        assert await h.host.sessions.last_answer(session.id) == "second"


async def test_a_family_is_found_by_query_and_includes_grandchildren_but_no_one_else(tmp_path):
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        runner = h.host.runner
        root = await runner.create(options=SessionOptions(title="root"))
        child = await runner.create(options=SessionOptions(title="child", parent_id=root.id))
        other_child = await runner.create(options=SessionOptions(title="other child", parent_id=root.id))
        grandchild = await runner.create(options=SessionOptions(title="grandchild", parent_id=child.id))
        stranger = await runner.create(options=SessionOptions(title="stranger"))
        await runner.create(options=SessionOptions(title="stranger's child", parent_id=stranger.id))
        family = await h.host.sessions.family(root.id)
        assert family == {root.id, child.id, other_child.id, grandchild.id}
        assert [s.id for s in await h.host.sessions.children(root.id)] == [child.id, other_child.id]
        assert await h.host.sessions.family(grandchild.id) == {grandchild.id}


async def test_a_top_level_invoke_is_an_api_session_and_a_child_is_an_agent_session(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="top"), Reply(text="child")], **NO_SERVERS) as h:
        top = await h.host.sessions.invoke(prompt="start")
        child = await h.host.sessions.invoke(prompt="help", options=SessionOptions(parent_id=top.session_id))
        top_session = await h.host.store.get_session(top.session_id)
        child_session = await h.host.store.get_session(child.session_id)
        assert (top_session.origin, top_session.parent_id) == ("api", None)
        assert (child_session.origin, child_session.parent_id) == ("agent", top.session_id)
        assert child.response == "child"


async def test_a_child_works_in_its_parents_workspace_with_its_parents_model(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with scripted_host(tmp_path, [Reply(text="p"), Reply(text="c")], workspace_roots=[other], **NO_SERVERS) as h:
        parent = await h.host.runner.create(
            prompt="p", options=SessionOptions(workspace=other, model="openai/other-model")
        )
        await h.host.runner.wait(parent.id, timeout=60)
        child = await h.host.sessions.invoke(prompt="c", options=SessionOptions(parent_id=parent.id))
        stored = await h.host.store.get_session(child.session_id)
        assert (stored.workspace, stored.model) == (str(other.resolve()), "openai/other-model")
        assert h.model.requests[-1].model == "other-model"


async def test_nesting_beyond_the_depth_limit_is_refused_with_a_clear_error(tmp_path):
    async with scripted_host(tmp_path, [], max_agent_depth=2, **NO_SERVERS) as h:
        root = await h.host.runner.create(options=SessionOptions(title="root"))
        one = await h.host.runner.create(options=SessionOptions(title="one", parent_id=root.id))
        two = await h.host.runner.create(options=SessionOptions(title="two", parent_id=one.id))
        with pytest.raises(DepthLimitExceeded, match="depth limit") as refused:
            await h.host.sessions.invoke(prompt="three", options=SessionOptions(parent_id=two.id))
        assert "max_agent_depth is 2" in str(refused.value)
        # Nothing was created for the refused child.
        assert [s.title for s in await h.host.store.list_sessions()].count("three") == 0


async def test_a_child_within_the_depth_limit_runs(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="deep enough")], max_agent_depth=2, **NO_SERVERS) as h:
        root = await h.host.runner.create(options=SessionOptions(title="root"))
        one = await h.host.runner.create(options=SessionOptions(title="one", parent_id=root.id))
        result = await h.host.sessions.invoke(prompt="two", options=SessionOptions(parent_id=one.id))
        assert (result.status, result.response) == ("completed", "deep enough")


async def test_a_forked_child_sees_its_parents_finished_turns_then_its_own_prompt(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="noted 42"), Reply(text="it was 42")], **NO_SERVERS) as h:
        parent = await h.run("remember 42", timeout=60)
        await h.host.sessions.invoke(
            prompt="what was it?", options=SessionOptions(parent_id=parent.id, fork=True)
        )
        sent = [m.get("content") for m in h.model.requests[-1].messages if m["role"] != "system"]
        assert sent == ["remember 42", "noted 42", "what was it?"]


async def test_a_running_session_takes_no_follow_up_until_it_ends(tmp_path, pool):
    async with scripted_host(tmp_path, [write("x.txt")], pool=pool) as h:
        session = await h.start("write")
        await h.next_approval()
        with pytest.raises(SessionBusy, match="still waiting_approval"):
            await h.host.sessions.follow_up(session.id, "and more")
        with pytest.raises(NotFound):
            await h.host.sessions.follow_up("no-such-session", "hello")
        await h.host.sessions.stop(session.id)


async def test_stopping_a_parent_stops_its_running_child_and_grandchild_and_their_approvals(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(text="parent"), write("x.txt"), write("y.txt")], pool=pool) as h:
        parent = await h.run("parent", timeout=60)
        child = await h.host.runner.create(prompt="child", options=SessionOptions(parent_id=parent.id))
        asked_in_child = await h.next_approval()
        grandchild = await h.host.runner.create(
            prompt="grandchild", options=SessionOptions(parent_id=child.id)
        )
        asked_in_grandchild = await h.next_approval()
        assert (asked_in_child.session_id, asked_in_grandchild.session_id) == (child.id, grandchild.id)
        await h.host.sessions.stop(parent.id)
        for session_id in (child.id, grandchild.id):
            assert (await h.host.store.get_session(session_id)).status == "stopped"
        for approval in (asked_in_child, asked_in_grandchild):
            assert (await h.host.store.get_approval(approval.id)).status != "pending"
            with pytest.raises(ApprovalClosed):
                await h.answer(approval, Decision(kind="allow_once"))
        assert not (h.workspace / "x.txt").exists() and not (h.workspace / "y.txt").exists()


async def test_deleting_a_session_withdraws_its_pending_approval_saying_why_then_removes_it(tmp_path, pool):
    async with scripted_host(tmp_path, [write("x.txt")], pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        await h.host.sessions.delete(session.id)
        resolved = await h.next_event("approval.resolved")
        assert resolved.data["id"] == approval.id
        assert (resolved.data["status"], resolved.data["decision"]["message"]) == ("cancelled", DELETED)
        with pytest.raises(NotFound):
            await h.host.store.get_session(session.id)
        assert await h.host.broker.pending() == []
        assert not (h.workspace / "x.txt").exists()
        with pytest.raises(NotFound):
            await h.host.sessions.delete(session.id)
