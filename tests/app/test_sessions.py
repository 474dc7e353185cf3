"""Invoking agents (backend/engine/invoke.py): nesting, the depth limit, forks, and stops that reach children."""

from __future__ import annotations

import pytest

from backend.domain.models import Decision
from backend.engine.invoke import DepthLimitExceeded, invoke_agent
from backend.permissions.approvals import ApprovalClosed
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

NO_SERVERS = {"builtin_servers": False}


async def test_a_top_level_invoke_is_an_api_session_and_a_child_is_an_agent_session(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="top"), Reply(text="child")], **NO_SERVERS) as h:
        top = await invoke_agent(h.host, prompt="start")
        child = await invoke_agent(h.host, prompt="help", parent_session_id=top.session_id)
        top_session = await h.host.store.get_session(top.session_id)
        child_session = await h.host.store.get_session(child.session_id)
        assert (top_session.origin, top_session.parent_id) == ("api", None)
        assert (child_session.origin, child_session.parent_id) == ("agent", top.session_id)
        assert child.response == "child"


async def test_a_child_works_in_its_parents_workspace_with_its_parents_model(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with scripted_host(tmp_path, [Reply(text="p"), Reply(text="c")], **NO_SERVERS) as h:
        parent = await h.host.runner.create(prompt="p", workspace=other, model="openai/other-model")
        await h.host.runner.wait(parent.id, timeout=15)
        child = await invoke_agent(h.host, prompt="c", parent_session_id=parent.id)
        stored = await h.host.store.get_session(child.session_id)
        assert (stored.workspace, stored.model) == (str(other.resolve()), "openai/other-model")
        assert h.model.requests[-1].model == "other-model"


async def test_nesting_beyond_the_depth_limit_is_refused_with_a_clear_error(tmp_path):
    async with scripted_host(tmp_path, [], max_agent_depth=2, **NO_SERVERS) as h:
        root = await h.host.runner.create(title="root")
        one = await h.host.runner.create(title="one", parent_id=root.id)
        two = await h.host.runner.create(title="two", parent_id=one.id)
        with pytest.raises(DepthLimitExceeded, match="depth limit") as refused:
            await invoke_agent(h.host, prompt="three", parent_session_id=two.id)
        assert "max_agent_depth is 2" in str(refused.value)
        # Nothing was created for the refused child.
        assert [s.title for s in await h.host.store.list_sessions()].count("three") == 0


async def test_a_child_within_the_depth_limit_runs(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="deep enough")], max_agent_depth=2, **NO_SERVERS) as h:
        root = await h.host.runner.create(title="root")
        one = await h.host.runner.create(title="one", parent_id=root.id)
        result = await invoke_agent(h.host, prompt="two", parent_session_id=one.id)
        assert (result.status, result.response) == ("completed", "deep enough")


async def test_a_forked_child_sees_its_parents_finished_turns_then_its_own_prompt(tmp_path):
    async with scripted_host(tmp_path, [Reply(text="noted 42"), Reply(text="it was 42")], **NO_SERVERS) as h:
        parent = await h.run("remember 42")
        await invoke_agent(h.host, prompt="what was it?", parent_session_id=parent.id, fork=True)
        sent = [m.get("content") for m in h.model.requests[-1].messages if m["role"] != "system"]
        assert sent == ["remember 42", "noted 42", "what was it?"]


async def test_stopping_a_parent_stops_its_running_child_and_cancels_the_childs_approval(tmp_path):
    write = Reply(
        tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "x.txt", "content": "x"})]
    )
    async with scripted_host(tmp_path, [Reply(text="parent"), write]) as h:
        parent = await h.run("parent")
        child = await h.host.runner.create(prompt="child", parent_id=parent.id)
        approval = await h.next_approval()
        assert approval.session_id == child.id
        await h.host.runner.stop(parent.id)
        assert (await h.host.store.get_session(child.id)).status == "stopped"
        assert (await h.host.store.get_approval(approval.id)).status != "pending"
        assert not (h.workspace / "x.txt").exists()
        with pytest.raises(ApprovalClosed):
            await h.answer(approval, Decision(kind="allow_once"))
