"""`invoke_agent` as a 2025-11-25 task (backend/gateway/tasks.py, task_methods.py), over the real
gateway at `/mcp` with the SDK's client: a task at once, its status following the session,
the result a plain call gives, collected from another connection or after a restart, and no
one else's to read or cancel.

The client sends the task-augmented call with `backend.mcp.tasks.start_task` (the SDK has no
task client) and the task methods with `send_request`. No sleeps: every wait is on an event or
on `tasks/result` (which blocks until the run ends), bounded.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import mcp_types as wire
import pytest
from gateway_testkit import (
    BOUND,
    HeldReply,
    ServedApp,
    accept,
    embedded_env,
    served_app,
    session_status,
    stdio_params,
    write_file,
)
from mcp import Client
from mcp.shared.exceptions import MCPError

from backend.mcp.tasks import start_task
from backend.testing import Reply, ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def get(client: Client, task_id: str) -> wire.GetTaskResult:
    request = wire.GetTaskRequest(params=wire.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, wire.GetTaskResult)


async def result(client: Client, task_id: str) -> wire.CallToolResult:
    request = wire.GetTaskPayloadRequest(params=wire.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, wire.CallToolResult)


async def cancel(client: Client, task_id: str) -> wire.CancelTaskResult:
    request = wire.CancelTaskRequest(params=wire.CancelTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, wire.CancelTaskResult)


async def listed(client: Client) -> list[str]:
    found = await client.session.send_request(wire.ListTasksRequest(), wire.ListTasksResult)
    return [t.task_id for t in found.tasks]


async def invoke_as_task(client: Client, prompt: str = "w", **arguments: Any) -> wire.Task:
    return await start_task(client, "invoke_agent", {"prompt": prompt, **arguments}, meta=None)


async def session_of(served: ServedApp, task_id: str) -> str:
    task = await served.host.store.gateway_task(task_id)
    assert task is not None
    return task.session_id


async def answer_over_rest(served: ServedApp, decision: str = "allow_once") -> None:
    (pending,) = await served.host.broker.pending()
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}) as rest:
        answered = await rest.post(f"{served.url}/api/approvals/{pending.id}", json={"decision": decision})
    assert answered.status_code == 200


def comparable(result: wire.CallToolResult) -> dict[str, Any]:
    """A call's result without what differs between two runs (the session id) or marks a task's."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped.pop("_meta", None)
    dumped["structuredContent"].pop("session_id")
    return dumped


async def test_a_task_call_answers_a_working_task_at_once_and_its_result_is_what_a_plain_call_returns(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held, Reply(text="done")], pool=pool) as served:
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)  # answered while the model is still held
                polled = await get(client, task.task_id)
                held.released.set()
                collected = await result(client, task.task_id)
                finished = await get(client, task.task_id)
                plain = await client.call_tool("invoke_agent", {"prompt": "w"})
                session_id = await session_of(served, task.task_id)
    assert (task.status, polled.status, finished.status) == ("working", "working", "completed")
    assert task.ttl == 3_600_000 and task.poll_interval is not None  # the ttl the client asked for
    assert collected.content[0].text == "done" and collected.is_error is False
    assert comparable(collected) == comparable(plain)
    assert collected.meta == {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
    assert collected.structured_content["session_id"] == session_id


async def test_the_server_declares_tasks_and_lists_invoke_agent_as_optionally_a_task(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served, served.client(mode="legacy") as client:
        with anyio.fail_after(BOUND):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            with pytest.raises(MCPError) as refused:
                await start_task(client, "list_sessions", {}, meta=None)
        tasks = client.server_capabilities.tasks
    assert tasks is not None and tasks.requests is not None and tasks.requests.tools is not None
    assert tasks.list is not None and tasks.cancel is not None
    assert tools["invoke_agent"].execution == wire.ToolExecution(task_support="optional")
    assert tools["list_sessions"].execution is None  # forbidden: only invoke_agent runs as a task
    assert refused.value.error.code == wire.METHOD_NOT_FOUND


async def test_a_task_waiting_for_an_approval_is_input_required_and_completes_once_it_is_answered(tmp_path, pool):
    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                await session_status(served.host, await session_of(served, task.task_id), "waiting_approval")
                waiting = await get(client, task.task_id)
                await answer_over_rest(served)
                collected = await result(client, task.task_id)
                finished = await get(client, task.task_id)
    assert waiting.status == "input_required"
    assert "write_file" in (waiting.status_message or "")
    assert collected.content[0].text == "written"
    assert finished.status == "completed"
    assert (served.workspace / "x.txt").read_text() == "hi"


async def test_a_client_waiting_on_tasks_result_is_asked_about_the_approval_with_the_task_named(tmp_path, pool):
    asked: list[wire.ElicitRequestParams] = []

    async def allow(context: Any, params: wire.ElicitRequestParams) -> wire.ElicitResult:
        asked.append(params)
        return accept("allow_once")

    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        async with served.client(mode="legacy", elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                await session_status(served.host, await session_of(served, task.task_id), "waiting_approval")
                collected = await result(client, task.task_id)  # asks, then waits for the end
        (approval,) = await served.host.store.list_approvals()
    assert collected.content[0].text == "written"
    assert len(asked) == 1 and "write_file" in asked[0].message
    assert asked[0].meta is not None
    assert asked[0].meta.get("io.modelcontextprotocol/related-task") == {"taskId": task.task_id}
    assert approval.status == "allowed" and approval.decider is not None and approval.decider.via == "elicitation"


async def test_a_client_that_disconnects_collects_the_result_on_a_new_connection(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held], pool=pool) as served:
        with anyio.fail_after(BOUND):
            async with served.client(mode="legacy") as first:
                task = await invoke_as_task(first)
            held.released.set()  # the run goes on with nobody connected
            await session_status(served.host, await session_of(served, task.task_id), "completed")
            async with served.client(mode="legacy") as second:
                status = await get(second, task.task_id)
                collected = await result(second, task.task_id)
                mine = await listed(second)
    assert status.status == "completed"
    assert collected.content[0].text == "done"
    assert mine == [task.task_id]


async def test_a_task_waiting_for_an_approval_across_a_host_restart_is_collected_after_it(tmp_path, pool):
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        key = served.app.state.auth.create_api_key("ci", role="approver")
        async with served.client(token=key, mode="legacy") as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                await session_status(served.host, await session_of(served, task.task_id), "waiting_approval")
    # The first host is gone; the second, on the same data dir, recovers the session.
    async with served_app(tmp_path, [Reply(text="written")], pool=pool) as again:
        async with again.client(token=key, mode="legacy") as client:
            with anyio.fail_after(BOUND):
                await session_status(again.host, await session_of(again, task.task_id), "waiting_approval")
                waiting = await get(client, task.task_id)
                await answer_over_rest(again)
                collected = await result(client, task.task_id)
    assert waiting.status == "input_required"
    assert collected.content[0].text == "written"


async def test_another_caller_can_neither_see_nor_collect_nor_cancel_a_task(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held], pool=pool) as served:
        other = served.app.state.auth.create_api_key("other", role="admin")
        async with served.client(mode="legacy") as owner, served.client(token=other, mode="legacy") as stranger:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(owner)
                refusals = []
                for attempt in (get, result, cancel):
                    with pytest.raises(MCPError) as refused:
                        await attempt(stranger, task.task_id)
                    refusals.append(refused.value.error.code)
                theirs = await listed(stranger)
                held.released.set()
                collected = await result(owner, task.task_id)
    assert refusals == [wire.INVALID_PARAMS] * 3  # as for a task that does not exist
    assert theirs == []
    assert collected.content[0].text == "done"  # the stranger's cancel stopped nothing


async def test_cancelling_a_task_stops_its_session_and_it_stays_cancelled(tmp_path, pool):
    held = HeldReply(Reply(text="never read"))
    async with served_app(tmp_path, [write_file(), held], pool=pool) as served:
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                session_id = await session_of(served, task.task_id)
                await session_status(served.host, session_id, "waiting_approval")
                cancelled = await cancel(client, task.task_id)
                after = await get(client, task.task_id)
                collected = await result(client, task.task_id)
                with pytest.raises(MCPError) as again:
                    await cancel(client, task.task_id)
            held.released.set()
        stored = await served.host.store.get_session(session_id)
    assert (cancelled.status, after.status) == ("cancelled", "cancelled")
    assert stored.status == "stopped"
    assert collected.is_error is True and collected.structured_content["status"] == "stopped"
    assert again.value.error.code == wire.INVALID_PARAMS  # a task that ended cannot be cancelled


async def test_a_refused_task_call_is_a_protocol_error_and_starts_nothing(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served:
        viewer = served.app.state.auth.create_api_key("watcher", role="viewer")
        async with served.client(mode="legacy") as client, served.client(token=viewer, mode="legacy") as weak:
            with anyio.fail_after(BOUND):
                with pytest.raises(MCPError) as no_prompt:
                    await start_task(client, "invoke_agent", {}, meta=None)
                with pytest.raises(MCPError) as no_session:
                    await invoke_as_task(client, session_id="nope")
                with pytest.raises(MCPError) as no_role:
                    await invoke_as_task(weak)
                mine = await listed(client)
    assert no_prompt.value.error.code == wire.INVALID_PARAMS
    assert no_session.value.error.code == wire.INVALID_PARAMS
    assert no_role.value.error.code == wire.INVALID_REQUEST
    assert mine == []
    assert served.model.requests == []


async def test_a_plain_invoke_agent_call_still_blocks_until_the_answer(tmp_path, pool):
    async with served_app(tmp_path, [Reply(text="plain")], pool=pool) as served:
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                plain = await client.call_tool("invoke_agent", {"prompt": "w"})
                mine = await listed(client)
    assert plain.content[0].text == "plain" and plain.structured_content["status"] == "completed"
    assert mine == []  # a plain call makes no task


async def test_tasks_result_waits_for_a_run_that_ends_while_it_waits(tmp_path, pool):
    held = HeldReply(Reply(text="late"))
    async with served_app(tmp_path, [held], pool=pool) as served:
        async with served.client(mode="legacy") as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                collected: list[wire.CallToolResult] = []
                async with anyio.create_task_group() as tg:

                    async def collect() -> None:
                        collected.append(await result(client, task.task_id))

                    tg.start_soon(collect)
                    still = await get(client, task.task_id)
                    assert collected == []
                    held.released.set()
    assert still.status == "working"
    assert collected[0].content[0].text == "late"


async def test_over_stdio_a_task_runs_and_its_approval_is_asked_on_tasks_result(tmp_path):
    async def allow(context: Any, params: wire.ElicitRequestParams) -> wire.ElicitResult:
        return accept("allow_once")

    with ScriptedModelServer([write_file(), Reply(text="wrote x.txt")]) as model:
        params = stdio_params(["mcp"], embedded_env(tmp_path, model))
        async with Client(params, mode="legacy", elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                task = await invoke_as_task(client)
                collected = await result(client, task.task_id)
                finished = await get(client, task.task_id)
    assert task.status == "working"
    assert collected.content[0].text == "wrote x.txt"
    assert finished.status == "completed"


async def test_a_task_started_through_the_bridge_is_collected_directly_at_mcp_once_the_bridge_is_gone(tmp_path, pool):
    held = HeldReply(Reply(text="done"))
    async with served_app(tmp_path, [held], pool=pool) as served:
        env = embedded_env(tmp_path / "client", served.model) | {"OVERSEER_TOKEN": served.token}
        with anyio.fail_after(BOUND):
            async with Client(stdio_params(["mcp", "--host-url", served.url], env), mode="legacy") as bridged:
                task = await invoke_as_task(bridged)
            held.released.set()
            async with served.client(mode="legacy") as direct:
                collected = await result(direct, task.task_id)
    assert collected.content[0].text == "done"
