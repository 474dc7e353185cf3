"""The claude-sdk engine's lifecycle: stop, resume, fork, recovery after a restart, usage, and the
processes it runs (one CLI, which spawns no MCP server of its own)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Decision, Session
from backend.engine.claude_sdk.recovery import RESTART_NOTE
from backend.engine.events import Subscription
from backend.app.host import Host
from backend.mcp.pool import McpPool
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import scripted_host, scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

WRITE = "mcp__file__write_file"
SDK = {"default_engine": "claude-sdk"}


def write(path: str = "notes.txt") -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": "hello\n"})


async def status_reaches(events: Subscription, session_id: str, status: str, *, timeout: float = 60) -> None:
    """Wait (bounded) for the session's status event."""
    while True:
        event = await events.get(timeout=timeout)
        if event.session_id == session_id and event.type == "session.status" and event.data["status"] == status:
            return


def texts(request: ModelRequest) -> str:
    return json.dumps(request.messages)


async def test_a_waiting_session_runs_one_cli_with_no_mcp_server_of_its_own_and_a_stop_interrupts_it(
    tmp_path: Path,
    pool: McpPool,
    cli_processes: Callable[[], list[int]],
    process_tree: Callable[[int], list[int]],
    process_cmdline: Callable[[int], list[bytes]],
) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="Understood, stopping there.")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        before = set(cli_processes())
        session = await h.start("write the notes")
        approval = await h.next_approval(timeout=60)
        [cli] = set(cli_processes()) - before
        assert process_tree(cli) == []  # every tool is proxied in-process: no stdio MCP server
        args = process_cmdline(cli)
        assert b"--strict-mcp-config" in args
        config = json.loads(args[args.index(b"--mcp-config") + 1])
        assert {s["type"] for s in config["mcpServers"].values()} == {"sdk"}

        stopped = await h.host.runner.stop(session.id)
        assert stopped.status == "stopped"
        assert cli not in cli_processes()
        assert (await h.host.store.get_approval(approval.id)).status == "cancelled"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped" and record.started_at is None
        assert not (h.workspace / "notes.txt").exists()

        # The stop interrupted the CLI's turn: resumed, Claude Code knows the call never ran.
        await h.host.runner.send(session.id, "never mind")
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed", done.error
        seen = texts(h.model.requests[-1])
        assert "never mind" in seen and "interrupted" in seen.lower()
        assert done.sdk_session_id == stopped.sdk_session_id


async def test_a_stop_while_a_tool_runs_cancels_it_and_records_the_call_as_stopped(tmp_path: Path, pool: McpPool) -> None:
    fifo = tmp_path / "hold"
    script = [
        Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": f"cat {fifo}"})]),
        Reply(text="unused"),
    ]
    async with scripted_host(tmp_path, script, pool=pool, permissions={"allow": ["mcp__shell__exec(cat *)"]}, **SDK) as h:
        os.mkfifo(fifo)  # `cat` blocks on it until someone writes: the tool is running
        session = await h.start("hold on")
        started = await h.next_event("tool.started", timeout=60)
        assert started.data["decision"].startswith("allow rule")
        stopped = await h.host.runner.stop(session.id)
        assert stopped.status == "stopped"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped" and record.started_at is not None
        assert len(h.model.requests) == 1


async def test_the_next_message_resumes_the_same_sdk_session_and_tokens_and_cost_add_up(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(text="The answer is 4.", usage=(120, 30)), Reply(text="And 6.", usage=(200, 10))]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        first = await h.run("what is 2+2?", timeout=60)
        assert first.status == "completed", first.error
        assert first.sdk_session_id
        assert (first.usage.input_tokens, first.usage.output_tokens) == (120, 30)
        assert first.usage.cost_usd > 0
        await h.host.runner.send(first.id, "and 3+3?")
        second = await h.host.runner.wait(first.id, timeout=60)
        assert second.status == "completed", second.error
        assert second.sdk_session_id == first.sdk_session_id
        assert (second.usage.input_tokens, second.usage.output_tokens) == (320, 40)
        assert second.usage.cost_usd > first.usage.cost_usd
        # Only the new message is sent; the rest comes from the CLI's resumed transcript.
        resumed = h.model.requests[-1].messages
        said = [json.dumps(m) for m in resumed if m.get("role") in ("user", "assistant")]
        assert any("what is 2+2?" in s for s in said) and any("The answer is 4." in s for s in said)
        assert sum("and 3+3?" in s for s in said) == 1
        usage_events = [e for e in await h.host.bus.replay(first.id) if e.type == "usage"]
        assert [e.data["input_tokens"] for e in usage_events] == [120, 200]


async def test_a_fork_starts_from_the_parent_s_sdk_session_and_gets_its_own(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(text="The code word is heron."), Reply(text="It was heron.")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        parent = await h.run("remember the code word heron", timeout=60)
        assert parent.status == "completed", parent.error
        result = await h.host.sessions.invoke(
            prompt="what was the code word?",
            options=SessionOptions(parent_id=parent.id, fork=True),
            timeout=60,
        )
        assert result.status == "completed" and result.response == "It was heron."
        child = await h.host.store.get_session(result.session_id)
        assert child.engine == "claude-sdk"
        assert child.sdk_session_id and child.sdk_session_id != parent.sdk_session_id
        assert (await h.host.store.get_session(parent.id)).sdk_session_id == parent.sdk_session_id
        assert "remember the code word heron" in texts(h.model.requests[-1])


async def test_after_a_restart_a_pending_approval_is_asked_again_and_the_sdk_session_resumes(
    tmp_path: Path, pool: McpPool
) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="The notes are written.")]
    with ScriptedModelServer(script) as model:
        settings = scripted_settings(tmp_path, model, **SDK)
        first = Host(settings, pool=pool)
        await first.start()
        watch = first.bus.subscribe(None)
        session = await first.runner.create(prompt="write the notes")
        event = await watch.get(timeout=60)
        while event.type != "approval.requested":
            event = await watch.get(timeout=60)
        approval_id = event.data["id"]
        asked_in = (await first.store.get_session(session.id)).sdk_session_id
        await first.aclose()  # the process ends with the approval unanswered

        second = Host(settings, pool=pool)
        events = second.bus.subscribe(None)
        await second.start()  # recovers the session
        try:
            await status_reaches(events, session.id, "waiting_approval")
            [pending] = await second.broker.pending(session_id=session.id)
            assert pending.id == approval_id  # the same approval, asked again
            assert not (settings.resolved_workspace / "notes.txt").exists()
            await second.broker.answer(pending.id, Decision(kind="allow_once"))
            done: Session = await second.runner.wait(session.id, timeout=60)
            assert done.status == "completed", done.error
            assert (settings.resolved_workspace / "notes.txt").read_text() == "hello\n"
            assert done.sdk_session_id == asked_in
            last = texts(model.requests[-1])
            assert RESTART_NOTE in last and "wrote" in last
            assert "write the notes" in last  # the resumed CLI transcript
            [record] = await second.store.list_tool_calls(session.id)
            assert record.status == "done" and record.decision == "allow_once (user)"
            model.assert_all_used()
        finally:
            await second.aclose()


async def test_a_message_sent_while_the_cli_works_is_answered_in_the_same_run(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(tool_calls=[write()]), Reply(text="Written."), Reply(text="Yes, in notes.txt.")]
    async with scripted_host(tmp_path, script, pool=pool, **SDK) as h:
        session = await h.start("write the notes")
        approval = await h.next_approval(timeout=60)
        await h.host.runner.send(session.id, "is it in notes.txt?")  # stored; the run is busy
        await h.answer(approval, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed", done.error
        assert [m.content for m in await h.host.store.list_messages(session.id) if m.role == "assistant"][-2:] == [
            "Written.",
            "Yes, in notes.txt.",
        ]
        assert h.model.requests[-1].last_prompt() == "is it in notes.txt?"
        h.model.assert_all_used()
