"""The gateway over streamable HTTP at `/mcp` (backend/gateway/http.py): credentials, roles, approvals.

The app runs on a loopback port in the test's own event loop (`served_app`), so a test can answer
an approval through the host's REST API, as the dashboard does, while an MCP call waits.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from pathlib import Path

import anyio
import httpx
import mcp_types as wire
from mcp.shared.exceptions import MCPError
import pytest
from gateway_testkit import (
    BOUND,
    HeldReply,
    ProgressLog,
    ServedApp,
    accept,
    served_app,
    session_status,
    write_file,
)

from backend.domain.models import Decision
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.store.sqlite import SqliteStore
from backend.testing import Reply, ScriptedToolCall

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_mcp_without_a_credential_is_401_and_with_a_wrong_one_too(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served, httpx.AsyncClient() as http:
        anonymous = await http.post(served.mcp_url, json=INITIALIZE, headers=MCP_HEADERS)
        wrong = await http.post(
            served.mcp_url,
            json=INITIALIZE,
            headers=MCP_HEADERS | {"Authorization": "Bearer not-the-token"},
        )
        cookie_only = await http.post(
            served.mcp_url,
            json=INITIALIZE,
            headers=MCP_HEADERS,
            cookies={"overseer_session": served.token},
        )
        with_token = await http.post(
            served.mcp_url,
            json=INITIALIZE,
            headers=MCP_HEADERS | {"Authorization": f"Bearer {served.token}"},
        )
    assert (anonymous.status_code, wrong.status_code, cookie_only.status_code) == (401, 401, 401)
    assert anonymous.headers["www-authenticate"] == 'Bearer realm="overseer"'
    assert with_token.status_code == 200


async def test_an_api_key_in_x_api_key_connects_and_a_viewer_key_cannot_answer(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served:
        viewer_key = served.app.state.auth.create_api_key("watcher", role="viewer")
        async with served.client(token=viewer_key, header="X-API-Key", mode="legacy") as client:
            with anyio.fail_after(BOUND):
                listed = await client.call_tool("list_pending_approvals", {})
                answered = await client.call_tool(
                    "answer_approval", {"id": "a" * 32, "decision": "allow_once"}
                )
                invoked = await client.call_tool("invoke_agent", {"prompt": "x"})
    assert listed.is_error is False
    assert (answered.is_error, invoked.is_error) == (True, True)
    assert served.model.requests == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_invoked_agents_approval_is_answered_with_answer_approval_over_http(tmp_path, mode, pool):
    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        progress = ProgressLog()
        async with served.client(mode=mode) as invoker, served.client(mode=mode) as approver:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def invoke() -> None:
                        results.append(
                            await invoker.call_tool(
                                "invoke_agent", {"prompt": "w"}, progress_callback=progress
                            )
                        )

                    tg.start_soon(invoke)
                    approval_id = await progress.approval()
                    await approver.call_tool(
                        "answer_approval", {"id": approval_id, "decision": "allow_session"}
                    )
    assert results[0].is_error is False and results[0].content[0].text == "written"
    assert results[0].structured_content["status"] == "completed"
    assert (served.workspace / "x.txt").read_text() == "hi"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_elicitation_answers_the_approval_over_http(tmp_path, mode, pool):
    async def allow(context, params):
        return accept("allow_once")

    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        async with served.client(mode=mode, elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
        (approval,) = await served.host.store.list_approvals()
    assert result.content[0].text == "written"
    assert approval.status == "allowed"


async def test_a_dashboard_answer_over_rest_withdraws_the_http_clients_prompt(tmp_path, pool):
    prompted = anyio.Event()
    withdrawn = anyio.Event()
    never = anyio.Event()

    async def wait_for_a_person(context, params):
        prompted.set()
        try:
            await never.wait()
        finally:
            withdrawn.set()
        return accept("deny")

    held = HeldReply(Reply(text="written"))
    async with (
        served_app(tmp_path, [write_file(), held], pool=pool) as served,
        served.client(mode="legacy", elicitation_callback=wait_for_a_person) as client,
    ):
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                results: list[wire.CallToolResult] = []

                async def invoke() -> None:
                    results.append(await client.call_tool("invoke_agent", {"prompt": "w"}))

                tg.start_soon(invoke)
                await prompted.wait()
                (pending,) = await served.host.broker.pending()
                async with httpx.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}) as rest:
                    answered = await rest.post(
                        f"{served.url}/api/approvals/{pending.id}", json={"decision": "allow_once"}
                    )
                assert answered.status_code == 200
                await withdrawn.wait()
                assert results == []  # withdrawn by the answer, not by the run ending
                held.released.set()
    assert results[0].content[0].text == "written"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelling_invoke_agent_over_http_stops_the_session(tmp_path, mode, pool):
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        progress = ProgressLog()
        async with served.client(mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        lambda: client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
                    )
                    approval_id = await progress.approval()
                    tg.cancel_scope.cancel()
                approval = await served.host.store.get_approval(approval_id)
                await session_status(served.host, approval.session_id, "stopped")
        assert (await served.host.store.get_approval(approval_id)).status == "cancelled"
        assert not (served.workspace / "x.txt").exists()


async def test_an_exposed_shell_call_waits_for_the_dashboard_and_runs_once_allowed(tmp_path, pool):
    async with served_app(tmp_path, [], expose_tools=True, pool=pool) as served:
        async with served.client(mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "mcp__shell__exec" in names and "invoke_agent" in names
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []
                    requested = served.host.bus.subscribe(None)

                    async def call() -> None:
                        results.append(
                            await client.call_tool("mcp__shell__exec", {"command": "echo gated > out.txt"})
                        )

                    tg.start_soon(call)
                    while (event := await requested.get()).type != "approval.requested":
                        pass
                    assert not (served.workspace / "out.txt").exists()
                    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}) as rest:
                        answered = await rest.post(
                            f"{served.url}/api/approvals/{event.data['id']}", json={"decision": "allow_once"}
                        )
                    assert answered.status_code == 200
        assert results[0].is_error is False
        assert (served.workspace / "out.txt").read_text().strip() == "gated"
        audit = await served.host.store.list_audit()
        assert [(a.tool_name, a.decision, a.decided_by) for a in audit] == [
            ("mcp__shell__exec", "allow", "user")
        ]
        session = await served.host.store.get_session(event.session_id)
        assert session.origin == "mcp"


async def test_a_denied_exposed_call_never_runs_and_the_client_gets_an_error_result(tmp_path, pool):
    async with (
        served_app(tmp_path, [], expose_tools=True, pool=pool) as served,
        served.client(mode="auto") as client,
    ):
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                results: list[wire.CallToolResult] = []
                requested = served.host.bus.subscribe(None)

                async def call() -> None:
                    results.append(await client.call_tool("mcp__shell__exec", {"command": "touch nope.txt"}))

                tg.start_soon(call)
                while (event := await requested.get()).type != "approval.requested":
                    pass
                await served.host.broker.answer(event.data["id"], Decision(kind="deny", message="not today"))
    assert results[0].is_error is True
    assert not (served.workspace / "nope.txt").exists()


async def test_without_expose_tools_the_hosts_tools_are_not_offered(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served, served.client(mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as refused:  # not offered: an unknown tool (issue 35, item 10)
            await client.call_tool("mcp__shell__exec", {"command": "touch nope.txt"})
    assert names == {
        "invoke_agent",
        "list_sessions",
        "get_session",
        "list_pending_approvals",
        "answer_approval",
    }
    assert refused.value.error.code == wire.INVALID_PARAMS
    assert not (served.workspace / "nope.txt").exists()


async def test_an_mcp_session_answers_only_the_credential_that_opened_it(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served:
        other_key = served.app.state.auth.create_api_key("other", role="admin")
        list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        async with httpx.AsyncClient() as http:
            opened = await http.post(
                served.mcp_url,
                json=INITIALIZE,
                headers=MCP_HEADERS | {"Authorization": f"Bearer {served.token}"},
            )
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            same = await http.post(
                served.mcp_url,
                json=list_tools,
                headers=MCP_HEADERS | session | {"Authorization": f"Bearer {served.token}"},
            )
            other = await http.post(
                served.mcp_url, json=list_tools, headers=MCP_HEADERS | session | {"X-API-Key": other_key}
            )
    assert (opened.status_code, same.status_code, other.status_code) == (200, 200, 404)


async def test_shutting_the_server_down_leaves_an_invoked_session_waiting_for_recovery(tmp_path, pool):
    # A shutdown is not a client cancelling: the run and its approval stay for the next start.
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        progress = ProgressLog()
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:

                async def invoke() -> None:
                    with suppress(Exception):  # the server goes away under the call
                        async with served.client(mode="legacy") as client:
                            await client.call_tool(
                                "invoke_agent", {"prompt": "w"}, progress_callback=progress
                            )

                tg.start_soon(invoke)
                approval_id = await progress.approval()
                await served.stop()
    await assert_left_for_recovery(served, approval_id)


async def test_a_client_cancelling_once_the_server_is_shutting_down_leaves_the_approval_pending(tmp_path, pool):
    # uvicorn closes connections when it shuts down, and a client whose connection closes cancels
    # its call: that must not read as a person cancelling. OverseerServer tells the host first.
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        progress = ProgressLog()
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        lambda: client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
                    )
                    approval_id = await progress.approval()
                    served.host.begin_shutdown()  # what OverseerServer does the moment it is asked to exit
                    tg.cancel_scope.cancel()
        await served.stop()  # waits for every MCP handler, including the cancelled one, to end
    await assert_left_for_recovery(served, approval_id)


async def test_a_sub_agents_approval_is_put_to_the_client_that_invoked_its_parent(tmp_path):
    # The host's own pool here: the invoke_agent tool server calls this app's API back.
    delegate = Reply(
        tool_calls=[
            ScriptedToolCall(name="mcp__invoke_agent__invoke_agent", arguments={"prompt": "write the file"})
        ]
    )
    script = [delegate, write_file(), Reply(text="child wrote it"), Reply(text="parent: done")]
    asked: list[str] = []

    async def allow(context, params):
        asked.append(params.message)
        return accept("allow_once")

    async with (
        served_app(tmp_path, script) as served,
        served.client(mode="legacy", elicitation_callback=allow) as c,
    ):
        with anyio.fail_after(BOUND):
            result = await c.call_tool("invoke_agent", {"prompt": "delegate it"})
        (approval,) = await served.host.store.list_approvals()
        child = await served.host.store.get_session(approval.session_id)
    assert result.content[0].text == "parent: done"
    assert child.parent_id == result.structured_content["session_id"]
    assert len(asked) == 1 and approval.session_id in asked[0]
    assert (served.workspace / "x.txt").read_text() == "hi"


async def assert_left_for_recovery(served: ServedApp, approval_id: str) -> None:
    """After the server is gone: the approval still pending, its session still active, as stored."""
    store = SqliteStore(served.data_dir / "overseer.db")
    await store.open()
    try:
        approval = await store.get_approval(approval_id)
        session = await store.get_session(approval.session_id)
    finally:
        await store.close()
    assert approval.status == "pending"
    assert session.status in ("running", "waiting_approval")


FEATURES_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "client_features_server.py"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_exposed_tools_progress_reaches_the_invoking_client_in_order(tmp_path, mode):
    config = McpServerConfig(command=sys.executable, args=[str(FEATURES_SERVER)], start_timeout=30)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with McpPool({"features": config}, log_dir=tmp_path / "logs") as features:
        async with served_app(tmp_path, [], expose_tools=True, pool=features) as served:
            async with served.client(mode=mode) as client:
                with anyio.fail_after(BOUND):
                    async with anyio.create_task_group() as tg:
                        results: list[wire.CallToolResult] = []
                        requested = served.host.bus.subscribe(None)

                        async def call() -> None:
                            results.append(
                                await client.call_tool(
                                    "mcp__features__progress", {"steps": 3}, progress_callback=progress
                                )
                            )

                        tg.start_soon(call)
                        while (event := await requested.get()).type != "approval.requested":
                            pass
                        await served.host.broker.answer(event.data["id"], Decision(kind="allow_once"))
    assert results[0].is_error is False
    assert seen[0][0] == 0 and "waiting for approval" in (seen[0][2] or "")
    assert seen[1:] == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]
