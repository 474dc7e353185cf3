"""Tools served as tasks on a 2026-07-28 connection: the tasks extension (SEP-2663,
`io.modelcontextprotocol/tasks`).

In that era a tool no longer says in its listing that it needs a task. The client declares the
extension in every request's capabilities, and the server decides, call by call, to answer a
`tools/call` with a task handle (`resultType: "task"`) instead of its result; without the
declaration such a server refuses the call (-32021, missing required client capability). The
client polls `tasks/get` (the final result or error rides on the terminal status: there is no
`tasks/result`), answers what a task asks on the way (`input_required`: its `inputRequests`,
answered with `tasks/update` through the client's own callbacks) and may `tasks/cancel`.

The SDK (2.3) gives the mechanism, not the extension: a `ClientExtension` whose claim on
`resultType: "task"` is resolved inside `Client.call_tool` (after its input-required rounds).
`TasksExtension` is that claim. What the call is told (the task's id as soon as the server made
it, each status as progress) comes from `watching`, set around the call by server_calls.py; a
call abandoned by its timeout or a stop cancels the task as a handshake-era one does (tasks.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.client import ClientExtension
from mcp.client.extension import ClaimContext, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError

from backend.mcp.tasks import (
    TERMINAL,
    TaskStarted,
    TaskStatusCallback,
    abandoned_cancels,
    finish_cancelling,
    poll_seconds,
    send_cancel,
    status_line,
)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

TaskStatus = Literal["working", "input_required", "completed", "cancelled", "failed"]


class _TaskFields(mcp_types.Result):
    """The extension's `Task` (a task handle and every `tasks/get` answer share it)."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreatedTask(_TaskFields):
    """A `tools/call` answered with a task handle (`CreateTaskResult`)."""

    result_type: Literal["task"] = "task"


class DetailedTask(_TaskFields):
    """A `tasks/get` answer: the task, with its result, error or pending requests inline."""

    result_type: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: mcp_types.InputRequests | None = None


class _TaskParams(mcp_types.RequestParams):
    task_id: str


class _GetTask(mcp_types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"  # `Mcp-Name` over HTTP, so a task's requests reach its instance


class _UpdateParams(_TaskParams):
    input_responses: mcp_types.InputResponses


class _UpdateTask(mcp_types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param: ClassVar[str | None] = "taskId"


class _CancelTask(mcp_types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"


@dataclass(kw_only=True)
class _Watch:
    on_started: TaskStarted | None
    on_status: TaskStatusCallback | None


_watch: ContextVar[_Watch | None] = ContextVar("overseer_task_watch", default=None)


@contextmanager
def watching(*, on_started: TaskStarted | None, on_status: TaskStatusCallback | None) -> Iterator[None]:
    """Inside: a call the server answers with a task tells `on_started` its id and `on_status`
    each status it reports (the callbacks a handshake-era task call takes as arguments)."""
    token = _watch.set(_Watch(on_started=on_started, on_status=on_status))
    try:
        yield
    finally:
        _watch.reset(token)


class TasksExtension(ClientExtension):
    """The client half of SEP-2663, for `Client(extensions=[...])`: declared in every request's
    capabilities on a 2026-07-28 connection, never on an older one."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve),)


async def _resolve(created: CreatedTask, ctx: ClaimContext) -> mcp_types.CallToolResult:
    """The claim's resolver: wait for the task the server answered the call with."""
    watch = _watch.get() or _Watch(on_started=None, on_status=None)
    async with abandoned_cancels(partial(cancel_task, ctx.session, created.task_id)):
        if watch.on_started is not None:
            await watch.on_started(created.task_id)
        if watch.on_status is not None:
            await watch.on_status(0, status_line(created.status, created.status_message))
        return await _collect(ctx.session, created, on_status=watch.on_status)


async def resume_task(
    client: Client, task_id: str, *, on_status: TaskStatusCallback | None = None
) -> mcp_types.CallToolResult:
    """Collect a task started before a restart, without calling the tool again; a task the server
    no longer knows is its protocol error, never a new call."""
    session = client.session
    async with abandoned_cancels(partial(cancel_task, session, task_id)):
        task = await _get(session, task_id)
        if on_status is not None:
            await on_status(0, status_line(task.status, task.status_message))
        return await _collect(session, task, on_status=on_status)


async def cancel_task(session: ClientSession, task_id: str) -> bool:
    """`tasks/cancel` for a caller being cancelled: bounded, never raising (tasks.finish_cancelling)."""
    return await finish_cancelling(send_cancel(session, task_id, _cancel_request(task_id)))


def _cancel_request(task_id: str) -> _CancelTask:
    return _CancelTask(params=_TaskParams(task_id=task_id))


async def _get(session: ClientSession, task_id: str) -> DetailedTask:
    return await session.send_request(_GetTask(params=_TaskParams(task_id=task_id)), DetailedTask)


async def _collect(
    session: ClientSession, task: _TaskFields, *, on_status: TaskStatusCallback | None
) -> mcp_types.CallToolResult:
    """Poll `task` until it ends (unbounded: the call's timeout bounds it); its result, or its error."""
    polls = 0
    answered: set[str] = set()  # the keys of a task's requests are never reused (SEP-2663)
    while task.status not in TERMINAL:
        if isinstance(task, DetailedTask) and task.status == "input_required" and task.input_requests:
            await _answer(session, task.task_id, task.input_requests, answered)
        await anyio.sleep(poll_seconds(task.poll_interval_ms))
        polls += 1
        task = await _get(session, task.task_id)
        if on_status is not None:
            await on_status(polls, status_line(task.status, task.status_message))
    detailed = task if isinstance(task, DetailedTask) else await _get(session, task.task_id)
    if detailed.status == "completed":
        if detailed.result is None:
            raise MCPError(code=mcp_types.INTERNAL_ERROR, message=f"task {task.task_id} completed without a result")
        return mcp_types.CallToolResult.model_validate(detailed.result, by_name=False)
    if detailed.status == "failed":
        error = detailed.error or {}
        raise MCPError(
            code=int(error.get("code", mcp_types.INTERNAL_ERROR)),
            message=str(error.get("message", f"task {task.task_id} failed")),
            data=error.get("data"),
        )
    return _error(status_line(detailed.status, detailed.status_message))


async def _answer(
    session: ClientSession, task_id: str, requests: mcp_types.InputRequests, answered: set[str]
) -> None:
    """Answer the task's requests not answered yet (`tasks/update`), each through the callback a
    request of the call itself would reach (a question goes to the call's session, as ever).

    A request the client declines ends the call with the callback's error, and the task is
    cancelled: it would wait for an answer that is not coming."""
    responses: mcp_types.InputResponses = {}
    for key, request in requests.items():
        if key in answered:
            continue
        meta = request.params.meta if request.params is not None else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        response = await session.dispatch_input_request(context, request)
        if isinstance(response, mcp_types.ErrorData):
            await send_cancel(session, task_id, _cancel_request(task_id))
            raise MCPError.from_error_data(response)
        responses[key] = response
    if not responses:
        return
    update = _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=responses))
    await session.send_request(update, mcp_types.EmptyResult)
    answered.update(responses)


def _error(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)
