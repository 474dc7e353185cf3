"""`invoke_agent` as a task on 2026-07-28, the `io.modelcontextprotocol/tasks` extension
(backend/gateway/task_extension.py), over the real gateway at `/mcp` with the SDK's client.

The client declares the extension with a result claim for `resultType: "task"` and takes the
claimed shape itself (`allow_claimed`), then drives `tasks/get`, `tasks/update` and
`tasks/cancel`. No sleeps: waits are on the session's status events, bounded.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
import mcp_types as wire
import pytest
from gateway_testkit import BOUND, HeldReply, ServedApp, served_app, session_status, write_file
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")

TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(dict[str, Any])


class CreatedTask(wire.Result):
    """The extension's `CreateTaskResult`."""

    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


async def not_resolved(created: CreatedTask, ctx: ClaimContext) -> wire.CallToolResult:
    raise AssertionError("these tests take the task themselves (allow_claimed)")


class TaskClient(ClientExtension):
    """Declares the tasks extension and accepts a task in answer to `tools/call`."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=not_resolved)]


class UpdateTask(wire.Request[dict[str, Any], Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: dict[str, Any]


class ResultOfTask(wire.Request[wire.GetTaskPayloadRequestParams, Literal["tasks/result"]]):
    method: Literal["tasks/result"] = "tasks/result"
    params: wire.GetTaskPayloadRequestParams


def task_client(served: ServedApp, **kwargs: Any) -> Client:
    return served.client(mode="auto", extensions=[TaskClient()], **kwargs)


async def invoke_as_task(client: Client, prompt: str = "w") -> CreatedTask:
    created = await client.session.call_tool("invoke_agent", {"prompt": prompt}, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    return created


async def get(client: Client, task_id: str) -> dict[str, Any]:
    request = wire.GetTaskRequest(params=wire.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, ANY)


async def cancel(client: Client, task_id: str) -> dict[str, Any]:
    request = wire.CancelTaskRequest(params=wire.CancelTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, ANY)


async def update(client: Client, task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    request = UpdateTask(params={"taskId": task_id, "inputResponses": responses})
    return await client.session.send_request(request, ANY)


async def session_of(served: ServedApp, task_id: str) -> str:
    task = await served.host.store.gateway_task(task_id)
    assert task is not None
    return task.session_id


def bare(result: dict[str, Any]) -> dict[str, Any]:
    """A result without the server's `_meta` stamp."""
    return {k: v for k, v in result.items() if k != "_meta"}


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    result = {k: v for k, v in result.items() if k not in ("_meta", "resultType")}
    result["structuredContent"] = {k: v for k, v in result["structuredContent"].items() if k != "session_id"}
    return result


async def test_a_client_declaring_tasks_gets_a_task_whose_get_carries_what_a_plain_call_returns(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held, Reply(text="done")], pool=pool) as served:
        async with task_client(served) as client, served.client(mode="auto") as plain_client:
            with anyio.fail_after(BOUND):
                created = await invoke_as_task(client)
                polled = await get(client, created.task_id)
                held.released.set()
                await session_status(served.host, await session_of(served, created.task_id), "completed")
                finished = await get(client, created.task_id)
                plain = await plain_client.call_tool("invoke_agent", {"prompt": "w"})
                discovered = plain_client.server_capabilities
    assert (created.status, polled["status"], finished["status"]) == ("working", "working", "completed")
    assert created.ttl_ms is not None and created.poll_interval_ms is not None
    assert polled["resultType"] == "complete" and "result" not in polled
    expected = plain.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert comparable(finished["result"]) == comparable(expected)
    assert finished["result"]["content"][0]["text"] == "done"
    assert discovered.extensions is not None and TASKS in discovered.extensions


async def test_an_approval_the_task_waits_for_is_an_input_request_answered_with_tasks_update(tmp_path, pool):
    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        async with task_client(served) as client:
            with anyio.fail_after(BOUND):
                created = await invoke_as_task(client)
                session_id = await session_of(served, created.task_id)
                await session_status(served.host, session_id, "waiting_approval")
                waiting = await get(client, created.task_id)
                (key,) = waiting["inputRequests"]
                ignored = await update(client, created.task_id, {"not-asked": {"action": "accept"}})
                acked = await update(
                    client,
                    created.task_id,
                    {key: {"action": "accept", "content": {"decision": "allow_once", "message": ""}}},
                )
                await session_status(served.host, session_id, "completed")
                finished = await get(client, created.task_id)
        (approval,) = await served.host.store.list_approvals()
    assert waiting["status"] == "input_required"
    assert waiting["inputRequests"][key]["method"] == "elicitation/create"
    assert "write_file" in waiting["inputRequests"][key]["params"]["message"]
    assert key == approval.id and approval.status == "allowed"
    assert bare(ignored) == bare(acked) == {"resultType": "complete"}
    assert finished["result"]["content"][0]["text"] == "written"
    assert (served.workspace / "x.txt").read_text() == "hi"


async def test_tasks_cancel_acknowledges_and_stops_the_session(tmp_path, pool):
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        async with task_client(served) as client:
            with anyio.fail_after(BOUND):
                created = await invoke_as_task(client)
                session_id = await session_of(served, created.task_id)
                await session_status(served.host, session_id, "waiting_approval")
                acked = await cancel(client, created.task_id)
                after = await get(client, created.task_id)
                again = await cancel(client, created.task_id)
            stored = await served.host.store.get_session(session_id)
    assert bare(acked) == bare(again) == {"resultType": "complete"}
    assert after["status"] == "cancelled" and "result" not in after
    assert stored.status == "stopped"


async def test_another_caller_cannot_read_answer_or_cancel_a_task(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held], pool=pool) as served:
        other = served.app.state.auth.create_api_key("other", role="admin")
        async with task_client(served) as owner, task_client(served, token=other) as stranger:
            with anyio.fail_after(BOUND):
                created = await invoke_as_task(owner)
                codes = []
                for attempt in (get, cancel, lambda c, t: update(c, t, {})):
                    with pytest.raises(MCPError) as refused:
                        await attempt(stranger, created.task_id)
                    codes.append(refused.value.error.code)
                still = await get(owner, created.task_id)
                held.released.set()
    assert codes == [wire.INVALID_PARAMS] * 3
    assert still["status"] == "working"


async def test_a_call_the_plain_path_refuses_makes_no_task_and_gets_the_tools_error_result(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served:
        viewer = served.app.state.auth.create_api_key("watcher", role="viewer")
        async with task_client(served) as client, task_client(served, token=viewer) as weak:
            with anyio.fail_after(BOUND):
                busy = await client.session.call_tool(
                    "invoke_agent", {"prompt": "w", "session_id": "nope"}, allow_claimed=True
                )
                refused = await weak.session.call_tool("invoke_agent", {"prompt": "w"}, allow_claimed=True)
    assert isinstance(busy, wire.CallToolResult) and busy.is_error
    assert "nope" in busy.content[0].text
    assert isinstance(refused, wire.CallToolResult) and refused.is_error
    assert served.model.requests == []  # nothing ran


async def test_the_handshake_eras_task_methods_are_not_served_on_2026(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served, task_client(served) as client:
        with anyio.fail_after(BOUND):
            with pytest.raises(MCPError) as no_result:
                await client.session.send_request(
                    ResultOfTask(params=wire.GetTaskPayloadRequestParams(task_id="x")), ANY
                )
            with pytest.raises(MCPError) as no_list:
                await client.session.send_request(wire.ListTasksRequest(), ANY)
    assert no_result.value.error.code == no_list.value.error.code == wire.METHOD_NOT_FOUND


async def test_a_task_request_whose_mcp_name_header_names_another_task_is_refused(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held], pool=pool) as served, task_client(served) as client:
        with anyio.fail_after(BOUND):
            created = await invoke_as_task(client)
            routed = await client.session.send_request(RoutedGet(params={"taskId": created.task_id}), ANY)
            with pytest.raises(MCPError) as mismatched:
                await client.session.send_request(
                    MisroutedGet(params={"taskId": created.task_id}), ANY
                )
            held.released.set()
    assert routed["taskId"] == created.task_id
    assert mismatched.value.error.code == wire.HEADER_MISMATCH


class RoutedGet(wire.Request[dict[str, Any], Literal["tasks/get"]]):
    """`tasks/get` with `Mcp-Name: <taskId>`, as SEP-2663 has clients send it over HTTP."""

    method: Literal["tasks/get"] = "tasks/get"
    params: dict[str, Any]
    name_param: ClassVar[str | None] = "taskId"


class MisroutedGet(wire.Request[dict[str, Any], Literal["tasks/get"]]):
    """`tasks/get` whose `Mcp-Name` names another task than its body."""

    method: Literal["tasks/get"] = "tasks/get"
    params: dict[str, Any]
    name_param: ClassVar[str | None] = "otherTask"

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        dumped = super().model_dump(**kwargs)
        dumped["params"]["otherTask"] = "not-" + self.params["taskId"]
        return dumped


async def test_overseers_own_client_calls_the_gateways_invoke_agent_as_a_task_and_gets_its_answer(tmp_path, pool):
    # Two Overseers: the caller's MCP pool (backend/mcp, which declares the tasks extension on
    # 2026-07-28) reaches the served host's `/mcp` as a `type: http` server.
    started: list[str] = []

    async def on_task(task_id: str) -> None:
        started.append(task_id)

    async with served_app(tmp_path, [Reply(text="from the other overseer")], pool=pool) as served:
        config = McpServerConfig(
            type="http", url=served.mcp_url, headers={"Authorization": f"Bearer {served.token}"}, start_timeout=BOUND
        )
        caller = McpPool({"peer": config}, log_dir=tmp_path / "logs")
        await caller.start()
        try:
            with anyio.fail_after(BOUND):
                await caller.wait_ready()
                result = await caller.call(
                    "mcp__peer__invoke_agent", {"prompt": "w"}, workspace=tmp_path, session_id="s1", on_task=on_task
                )
        finally:
            await caller.aclose()
        task = await served.host.store.gateway_task(started[0]) if started else None
    assert result.text.startswith("from the other overseer"), result.text
    assert task is not None and task.ended == "completed"  # it went as a task, not a plain call
