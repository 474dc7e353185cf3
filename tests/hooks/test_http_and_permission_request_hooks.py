"""An http hook against a loopback server, and PermissionRequest hooks answering an ask."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host
from backend.testing.loopback import ListeningServer, serve_in_task
from tests.hooks.hook_scripts import command, hooks_block, install

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXEC = "mcp__shell__exec"


async def hook_server(answer: dict[str, Any], seen: list[dict[str, Any]]) -> tuple[ListeningServer, asyncio.Task[None]]:
    async def hook(request: Request) -> JSONResponse:
        seen.append(await request.json())
        return JSONResponse(answer)

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    server = ListeningServer(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    task = await serve_in_task(server, within=10)
    return server, task


def url_of(server: ListeningServer) -> str:
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


async def test_an_http_hook_gets_the_event_json_and_its_deny_blocks_the_call(tmp_path: Path, pool: McpPool) -> None:
    seen: list[dict[str, Any]] = []
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "change freeze until Monday"}}
    server, task = await hook_server(deny, seen)
    try:
        hooks = hooks_block(PreToolUse=[("Bash", [{"type": "http", "url": url_of(server), "timeout": 5}])])
        script = [Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "make deploy"})]), Reply(text="Ok.")]
        async with scripted_host(tmp_path, script, pool=pool, hooks=hooks, permissions={"allow": ["Bash"]}) as h:
            session = await h.run("deploy")
            [record] = await h.host.store.list_tool_calls(session.id)
            assert record.status == "denied" and "change freeze until Monday" in (record.result or "")
            [event] = seen
            assert (event["hook_event_name"], event["tool_name"]) == ("PreToolUse", "Bash")
            assert event["tool_input"] == {"command": "make deploy"} and event["session_id"] == session.id
            [entry] = await h.host.store.list_audit()
            assert entry.decided_by == "hook" and entry.decision == "deny"
    finally:
        server.should_exit = True
        await task


async def test_an_http_hook_that_cannot_be_reached_fails_closed(tmp_path: Path, pool: McpPool) -> None:
    hooks = hooks_block(PreToolUse=[("", [{"type": "http", "url": "http://127.0.0.1:9/hook", "timeout": 2}])])
    script = [Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "echo hi"})]), Reply(text="Ok.")]
    async with scripted_host(tmp_path, script, pool=pool, hooks=hooks, permissions={"allow": ["Bash"]}) as h:
        session = await h.run("hi")
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "denied" and "could not be reached" in (record.result or "")


async def test_a_permission_request_hook_answers_the_default_question_but_not_an_ask_rule(
    tmp_path: Path, pool: McpPool
) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    approve = install(ws, "approve", 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"hookSpecificOutput": '
                      '{"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}))\n')
    hooks = hooks_block(PermissionRequest=[("Bash", [command(approve)])])
    script = [
        Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "echo asked-by-default"})]),
        Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "git push"})]),
        Reply(text="Ok."),
    ]
    async with scripted_host(tmp_path, script, pool=pool, hooks=hooks, permissions={"ask": ["Bash(git push*)"]}) as h:
        session = await h.start("go")
        approval = await h.next_approval()  # only the ask rule's call reaches a person
        assert approval.arguments == {"command": "git push"}
        first = (await h.host.store.list_tool_calls(session.id))[0]
        assert first.status == "done" and first.decision == f"allowed by hook:{approve}"
        await h.host.runner.stop(session.id)
