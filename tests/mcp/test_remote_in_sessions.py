"""A remote MCP server's tools in real sessions: the same gate, both engines.

A whole host (store, gate, pool, engine) with the scripted model, and a real remote server on
loopback (tests/mcp/fixtures/remote_server.py). Policies and permission rules written for
`mcp__docs__...` govern its tools exactly as they govern a stdio server's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backend.domain.models import Decision
from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import only_servers, scripted_host

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from remote_server import RemoteServer  # noqa: E402

ENGINES: dict[str, Callable[[ScriptedModelServer], dict[str, Any]]] = {
    "litellm": lambda m: {},
    "claude-sdk": lambda m: {"default_engine": "claude-sdk"},
}


def docs(server: RemoteServer) -> dict[str, McpServerConfig]:
    return {**only_servers(), "docs": McpServerConfig(type="http", url=server.url, start_timeout=20)}


def echo(text: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__docs__echo", arguments={"text": text})])


@pytest.mark.parametrize("engine", ENGINES)
async def test_both_engines_call_a_remote_tool_that_a_rule_allows(tmp_path: Path, engine: str):
    script = [echo("from the model"), Reply(text="done")]
    async with RemoteServer(legacy=True) as server:
        allow = {"permissions": {"allow": ["mcp__docs__echo"]}}
        async with scripted_host(tmp_path, script, mcp_servers=docs(server), for_model=ENGINES[engine], **allow) as h:
            session = await h.run("look it up", timeout=90)
            results = h.model.requests[-1].tool_results()
    assert session.status == "completed", session.error
    assert [r.text for r in results] == ["echo: from the model"]
    assert server.seen.calls == {"echo": 1}


async def test_a_deny_policy_for_the_remote_servers_tools_keeps_calls_from_it(tmp_path: Path):
    script = [echo("should not arrive"), Reply(text="could not")]
    async with RemoteServer(legacy=True) as server:
        deny = {"policies": {"mcp__docs__*": "deny"}}
        async with scripted_host(tmp_path, script, mcp_servers=docs(server), **deny) as h:
            session = await h.run("look it up")
            [result] = h.model.requests[-1].tool_results()
    assert session.status == "completed", session.error
    assert result.text.startswith("Denied: policy mcp__docs__* = deny")
    assert server.seen.calls == {}


async def test_an_ask_policy_for_the_remote_servers_tools_waits_for_a_person(tmp_path: Path):
    script = [echo("asked first"), Reply(text="done")]
    async with RemoteServer(legacy=True) as server:
        ask = {"policies": {"mcp__docs__*": "ask"}}
        async with scripted_host(tmp_path, script, mcp_servers=docs(server), **ask) as h:
            started = await h.start("look it up")
            approval = await h.next_approval()
            calls_while_waiting = dict(server.seen.calls)
            await h.answer(approval, Decision(kind="allow_once"))
            session = await h.host.runner.wait(started.id, timeout=30)
    assert approval.tool_name == "mcp__docs__echo"
    assert calls_while_waiting == {}
    assert session.status == "completed" and server.seen.calls == {"echo": 1}


async def test_an_approval_for_a_remote_tool_survives_a_restart_of_overseer(tmp_path: Path):
    async with RemoteServer(legacy=True) as server:
        ask = {"policies": {"mcp__docs__*": "ask"}}
        async with scripted_host(tmp_path, [echo("after the restart")], mcp_servers=docs(server), **ask) as h:
            started = await h.start("look it up")
            approval = await h.next_approval()
        # Overseer stopped with the approval pending; the next host finds it and waits for it.
        async with scripted_host(tmp_path, [Reply(text="done")], mcp_servers=docs(server), **ask) as h:
            still = await h.host.store.get_approval(approval.id)
            calls_before_answer = dict(server.seen.calls)
            await h.answer(still, Decision(kind="allow_once"))
            session = await h.host.runner.wait(started.id, timeout=60)
            [result] = h.model.requests[-1].tool_results()
    assert (still.status, calls_before_answer) == ("pending", {})
    assert session.status == "completed", session.error
    assert result.text == "echo: after the restart"
    assert server.seen.calls == {"echo": 1}
