"""The invoke_agent server (mcp_servers/invoke_agent): a parent runs a child on a real host, approvals inside it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from tool_server_helpers import REPO_ROOT, text

from backend.domain.session_options import SessionOptions
from backend.domain.models import Approval, Decision
from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.web import WebHarness, serve_scripted
from mcp_servers.invoke_agent.server import create_server

INVOKE = "mcp__invoke_agent__invoke_agent"


def invoke_call(prompt: str, **extra: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=INVOKE, arguments={"prompt": prompt, **extra})])


async def _next_pending_approval(h: WebHarness) -> Approval:
    """The first approval to be pending on the host (bounded wait on its events, no polling)."""
    async def wait() -> Approval:
        events = h.host.bus.subscribe(None)
        try:
            pending = await h.host.broker.pending()
            if pending:
                return pending[0]
            while True:
                event = await events.get(timeout=20)
                if event.type == "approval.requested":
                    return Approval.model_validate(event.data)
        finally:
            h.host.bus.unsubscribe(events)

    return await asyncio.to_thread(h.call, wait(), 30)


async def test_a_parent_agent_runs_a_child_whose_approval_surfaces_and_gets_its_answer(tmp_path: Path) -> None:
    def child_answers(request: ModelRequest) -> Reply:
        assert request.tool_results()[0].text == "wrote 2 bytes to notes.txt"
        return Reply(text="the child wrote notes.txt")

    def parent_finishes(request: ModelRequest) -> Reply:
        return Reply(text="parent saw: " + request.last_tool_results()[0])

    script = [
        invoke_call("write notes.txt saying hi"),
        Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "hi"})]),
        child_answers,
        parent_finishes,
    ]
    with serve_scripted(tmp_path, script) as h:
        h.call(h.host.pool.wait_ready(timeout=30), 40)
        parent = h.call(h.host.runner.create(prompt="delegate the notes"))
        approval = await _next_pending_approval(h)
        child = h.call(h.host.store.get_session(approval.session_id))
        assert (child.parent_id, child.origin) == (parent.id, "agent")
        assert h.call(h.host.store.get_session(parent.id)).status == "running"
        h.call(h.host.broker.answer(approval.id, Decision(kind="allow_once")))
        done = h.call(h.host.runner.wait(parent.id, timeout=30), 40)
        assert done.status == "completed"
        assert (h.workspace / "notes.txt").read_text() == "hi"
        messages = h.call(h.host.store.list_messages(parent.id))
        assert messages[-1].content == "parent saw: the child wrote notes.txt"
        h.model.assert_all_used()


async def test_the_tool_returns_the_child_session_status_and_cost_as_structured_content(tmp_path: Path) -> None:
    with serve_scripted(tmp_path, [Reply(text="42", usage=(7, 3))], builtin_servers=False) as h:
        parent = h.call(h.host.runner.create(options=SessionOptions(title="parent")))
        server = create_server(tmp_path, trust_meta=True, host_url=h.url, token=h.token)
        async with Client(server) as client:
            result = await client.call_tool(
                "invoke_agent", {"prompt": "answer"}, meta={"overseer/session_id": parent.id}
            )
        assert not result.is_error and text(result) == "42"
        structured = result.structured_content or {}
        assert structured["status"] == "completed"
        assert structured["tokens"] == {"input": 7, "output": 3}
        child = h.call(h.host.store.get_session(structured["session_id"]))
        assert child.parent_id == parent.id


async def test_beyond_the_depth_limit_the_tool_says_so_and_no_child_runs(tmp_path: Path) -> None:
    with serve_scripted(tmp_path, [], builtin_servers=False, max_agent_depth=1) as h:
        root = h.call(h.host.runner.create(options=SessionOptions(title="root")))
        child = h.call(h.host.runner.create(options=SessionOptions(title="child", parent_id=root.id)))
        async with Client(create_server(tmp_path, trust_meta=True, host_url=h.url, token=h.token)) as client:
            result = await client.call_tool("invoke_agent", {"prompt": "go deeper"}, meta={"overseer/session_id": child.id})
        assert result.is_error
        assert "depth limit" in text(result) and "max_agent_depth is 1" in text(result)
        assert len(h.model.requests) == 0


async def test_a_failed_child_is_an_error_result_with_its_reason(tmp_path: Path) -> None:
    failing = [Reply(status=500, text="provider down")] * 4
    with serve_scripted(tmp_path, failing, builtin_servers=False, model_retries=0) as h:
        async with Client(create_server(tmp_path, trust_meta=False, host_url=h.url, token=h.token)) as client:
            result = await client.call_tool("invoke_agent", {"prompt": "try"})
        assert result.is_error
        assert text(result).startswith("The child agent ended error:")


async def test_a_standalone_server_ignores_a_parent_in_meta(tmp_path: Path) -> None:
    with serve_scripted(tmp_path, [Reply(text="top-level")], builtin_servers=False) as h:
        parent = h.call(h.host.runner.create(options=SessionOptions(title="parent")))
        async with Client(create_server(tmp_path, trust_meta=False, host_url=h.url, token=h.token)) as client:
            result = await client.call_tool("invoke_agent", {"prompt": "hi"}, meta={"overseer/session_id": parent.id})
        child = h.call(h.host.store.get_session((result.structured_content or {})["session_id"]))
        assert (child.parent_id, child.origin) == (None, "api")


async def test_fork_session_outside_overseer_is_refused(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path, trust_meta=False, host_url="http://127.0.0.1:9", token="t")) as client:
        result = await client.call_tool("invoke_agent", {"prompt": "hi", "fork_session": True})
    assert result.is_error and "fork_session needs a parent session" in text(result)


async def test_without_a_host_the_tool_explains_how_to_connect_one(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path, trust_meta=False, host_url=None)) as client:
        result = await client.call_tool("invoke_agent", {"prompt": "hi"})
    assert result.is_error
    assert "--host-url" in text(result) and "OVERSEER_TOKEN" in text(result)


async def test_an_unreachable_host_is_an_error_naming_it(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    async with Client(create_server(tmp_path, trust_meta=False, host_url=url, token="t")) as client:
        result = await client.call_tool("invoke_agent", {"prompt": "hi"})
    assert result.is_error and f"cannot reach the Overseer host at {url}" in text(result)


async def test_a_wrong_token_is_an_error_saying_which_credential_to_set(tmp_path: Path) -> None:
    with serve_scripted(tmp_path, [], builtin_servers=False) as h:
        async with Client(create_server(tmp_path, trust_meta=False, host_url=h.url, token="wrong")) as client:
            result = await client.call_tool("invoke_agent", {"prompt": "hi"})
    assert result.is_error and "401" in text(result) and "OVERSEER_TOKEN" in text(result)


async def test_invoke_agent_declares_honest_annotations(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path, trust_meta=False)) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "invoke_agent"
    hints = tool.annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (False, False, True)


async def test_stdio_invoke_agent_server_reads_the_host_url_and_token_it_is_given(tmp_path: Path) -> None:
    with serve_scripted(tmp_path, [Reply(text="over stdio")], builtin_servers=False) as h:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcp_servers.invoke_agent", "--host-url", h.url],
            env={**os.environ, "OVERSEER_TOKEN": h.token},
            cwd=str(REPO_ROOT),
        )
        async with Client(params) as client:
            result = await client.call_tool("invoke_agent", {"prompt": "hello"})
        assert not result.is_error and text(result) == "over stdio"


def test_invoke_agent_help_names_the_host_url_and_token() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "mcp_servers.invoke_agent", "--help"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=30, check=True,
    ).stdout
    assert "--host-url" in shown and "OVERSEER_TOKEN" in shown


async def test_a_parent_hands_a_task_to_another_named_agent_which_works_in_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "reviews").mkdir()
    agents = [{"id": "reviewer", "workspace": str(tmp_path / "reviews"), "model": "openai/review-model"}]
    with serve_scripted(tmp_path, [Reply(text="reviewed")], builtin_servers=False, agents=agents) as h:
        parent = h.call(h.host.runner.create(options=SessionOptions(title="parent")))
        async with Client(create_server(tmp_path, trust_meta=True, host_url=h.url, token=h.token)) as client:
            result = await client.call_tool(
                "invoke_agent", {"prompt": "review it", "agent": "reviewer"}, meta={"overseer/session_id": parent.id}
            )
            unknown = await client.call_tool(
                "invoke_agent", {"prompt": "review it", "agent": "ghost"}, meta={"overseer/session_id": parent.id}
            )
        assert not result.is_error and text(result) == "reviewed"
        child = h.call(h.host.store.get_session((result.structured_content or {})["session_id"]))
        assert (child.parent_id, child.agent_id) == (parent.id, "reviewer")
        assert child.workspace == str((tmp_path / "reviews").resolve()) != parent.workspace
        assert h.model.requests[0].model == "review-model"
        assert unknown.is_error and "no agent 'ghost'" in text(unknown)
