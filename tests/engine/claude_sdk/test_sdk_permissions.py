"""The claude-sdk engine under the gate: the same decisions, approvals, audit rows and events as
the LiteLLM engine, with the real Claude Code CLI talking to the scripted model's Anthropic API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

WRITE = "mcp__file__write_file"
READ = "mcp__file__read_file"
EXEC = "mcp__shell__exec"
SDK = {"default_engine": "claude-sdk"}


def write(path: str = "notes.txt", content: str = "hello\n") -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": content})


async def test_an_approved_call_runs_on_the_pool_and_claude_code_reads_its_result(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(text="Writing the notes.", tool_calls=[write()]), Reply(text="All written.")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        watch = h.host.bus.subscribe(None)
        session = await h.start("write the notes")
        approval = await h.next_approval(timeout=60)
        assert (await h.host.store.get_session(session.id)).status == "waiting_approval"
        assert not (h.workspace / "notes.txt").exists()
        # The assistant message and its call are stored before the call is decided.
        [_, asked] = await h.host.store.list_messages(session.id)
        assert asked.role == "assistant" and asked.content == "Writing the notes."
        assert [c.id for c in asked.tool_calls] == [approval.tool_call_id]

        await h.answer(approval, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed", done.error
        assert (h.workspace / "notes.txt").read_text() == "hello\n"
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by, entry.tool_call_id) == ("allow", "user", approval.tool_call_id)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert (record.status, record.decision) == ("done", "allow_once (user)")
        [result] = h.model.requests[-1].tool_results()
        assert "wrote" in result.text and not result.is_error
        messages = await h.host.store.list_messages(session.id)
        assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert messages[-1].content == "All written."

        events = watch.drain()
        tokens = "".join(e.data["text"] for e in events if e.type == "token" and e.session_id == session.id)
        assert tokens == "Writing the notes.All written."
        kinds = [e.type for e in events if not e.ephemeral and e.session_id == session.id]
        assert kinds.index("message") < kinds.index("approval.requested") < kinds.index("tool.started")
        h.model.assert_all_used()


async def test_a_denial_with_a_message_never_runs_and_claude_code_reads_the_message(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="I will use staging.")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        session = await h.start("write the notes")
        await h.answer(await h.next_approval(timeout=60), Decision(kind="deny", message="use staging"))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed", done.error
        assert not (h.workspace / "notes.txt").exists()
        [result] = h.model.requests[-1].tool_results()
        assert result.is_error and "use staging" in result.text
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by, entry.detail) == ("deny", "user", "use staging")
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "denied"


async def test_edited_arguments_reach_the_tool_as_updated_input(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        session = await h.start("write the notes")
        edited = {"path": "other.txt", "content": "edited\n"}
        await h.answer(await h.next_approval(timeout=60), Decision(kind="allow_once", updated_arguments=edited))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed", done.error
        assert not (h.workspace / "notes.txt").exists()
        assert (h.workspace / "other.txt").read_text() == "edited\n"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.arguments == edited and record.status == "done"
        [entry] = await h.host.store.list_audit()
        assert entry.arguments == edited


async def test_an_unanswered_approval_times_out_to_a_denial_the_model_reads(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="gave up")]
    async with scripted_host(tmp_path, script, pool=pool, approval_timeout=0.5, **SDK) as h:
        session = await h.run("write the notes", timeout=60)
        assert session.status == "completed", session.error
        assert not (h.workspace / "notes.txt").exists()
        [result] = h.model.requests[-1].tool_results()
        assert result.is_error and "timed out" in result.text
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by) == ("deny", "timeout")


async def test_the_cli_is_shown_only_the_mode_s_tools_and_none_a_whole_tool_deny_rule_forbids(
    tmp_path: Path, pool: McpPool
) -> None:
    async with scripted_host(tmp_path, [Reply(text="a"), Reply(text="b")], pool=pool, permissions={"deny": [EXEC]}, **SDK) as h:
        await h.run("what is here?", SessionOptions(mode="ask"), timeout=60)
        offered = set(h.model.requests[0].tool_names)
        assert READ in offered and "mcp__file__list_dir" in offered
        assert not offered & {WRITE, "mcp__file__edit_file", EXEC}
        await h.run("and now?", SessionOptions(mode="agent"), timeout=60)
        offered = set(h.model.requests[1].tool_names)
        assert {READ, WRITE, "mcp__file__edit_file"} <= offered
        assert EXEC not in offered


async def test_a_call_claude_code_allowed_by_its_own_settings_is_refused_by_the_proxy(
    tmp_path: Path, pool: McpPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The person lets the CLI read their own Claude settings, which allow a tool outright: the
    # CLI then never asks can_use_tool, no allow decision is recorded, and the tool never runs.
    config = tmp_path / "claude-config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"permissions": {"allow": [READ]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    script = [Reply(tool_calls=[ScriptedToolCall(name=READ, arguments={"path": "secret.txt"})]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, claude_sdk_setting_sources=["user"], **SDK) as h:
        (h.workspace / "secret.txt").write_text("the secret\n")
        session = await h.run("read it", timeout=60)
        assert session.status == "completed", session.error
        [result] = h.model.requests[-1].tool_results()
        assert result.is_error and "No allow decision was recorded" in result.text
        assert "the secret" not in result.text
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.tool_name) == ("deny", READ)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "denied" and record.started_at is None
