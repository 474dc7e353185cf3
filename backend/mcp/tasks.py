"""Calling a tool as a task (MCP 2025-11-25 tasks): a task-augmented `tools/call`, polling
`tasks/get` until the task ends, and the result fetched with `tasks/result`.

A tool whose listing says `execution.taskSupport: "required"` fails every plain call, so such a
tool is called this way; "optional" and "forbidden" tools stay plain calls. The polls run
inside the call's own timeout (server_calls.py), so a task that never ends is the call's
timeout like any slow tool; each status the server reports goes to the progress callback, which
is what the tool card shows while the call runs.

A call that ends before its task does (its timeout, or its session stopped) sends `tasks/cancel`,
so the server stops working for nobody: best effort, bounded, and never instead of the call's own
outcome. A host going down leaves its tasks running (`kept_while`), to collect them after the restart.
The 2026-07-28 era serves tasks through an extension instead (task_extension.py), which shares the
polling bounds, the status lines and the cancelling here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

logger = logging.getLogger(__name__)

TaskSupport = Literal["forbidden", "optional", "required"]

TaskStatusCallback = Callable[[int, str], Awaitable[None]]
"""Told each status a running task reports: the number of the poll, and a line for a person."""

TaskStarted = Callable[[str], Awaitable[None]]
"""Told the task's id as soon as the server created it (to keep it with the call)."""

TASK_TTL_MS = 60 * 60 * 1000
"""How long the server is asked to keep a task after it is created: an hour, enough to collect a
result after a host restart. The server may keep it for less; it says so in `ttl`."""

CANCEL_BOUND_S = 5.0
"""How long a `tasks/cancel` may hold up the end of a call that gave up on its task."""

_kept: ContextVar[Callable[[], bool] | None] = ContextVar("overseer_task_kept", default=None)

_DEFAULT_POLL_S = 1.0
_MIN_POLL_S = 0.01  # a server's `pollInterval: 0` must not become a busy loop
_MAX_POLL_S = 30.0  # nor a huge one a call that never looks again
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""The statuses a task never leaves (both eras)."""


@contextmanager
def kept_while(going_down: Callable[[], bool]) -> Iterator[None]:
    """Inside: a call cancelled while `going_down()` is true leaves its task running on the server
    (the host is shutting down, and the next one collects the task); any other cancellation of
    the call cancels its task."""
    token = _kept.set(going_down)
    try:
        yield
    finally:
        _kept.reset(token)


def task_support(tool: mcp_types.Tool) -> TaskSupport:
    """How the tool may be called as a task; a listing without `execution` means "forbidden"."""
    mode = tool.execution.task_support if tool.execution is not None else None
    return mode or "forbidden"


def poll_seconds(interval_ms: int | None) -> float:
    """How long to wait before the next poll: the server's interval, within sane bounds."""
    if interval_ms is None:
        return _DEFAULT_POLL_S
    return min(max(interval_ms / 1000, _MIN_POLL_S), _MAX_POLL_S)


def status_line(status: str, message: str | None) -> str:
    """A task's status as the tool card shows it."""
    return f"task {status}: {message}" if message else f"task {status}"


def _status_line(task: mcp_types.Task) -> str:
    return status_line(task.status, task.status_message)


async def start_task(
    client: Client, tool: str, arguments: dict[str, object], *, meta: mcp_types.RequestParamsMeta | None
) -> mcp_types.Task:
    """Send the task-augmented `tools/call`; the server answers with the task it created.

    Below `send_request`, on purpose: the SDK (2.3) checks every `tools/call` answer against
    `CallToolResult`, which a `CreateTaskResult` is not, and has no task client of its own. The
    request is stamped as `send_request` stamps it, and the answer checked as a `CreateTaskResult`.
    """
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(
            name=tool, arguments=arguments, task=mcp_types.TaskMetadata(ttl=TASK_TTL_MS), _meta=meta
        )
    )
    session = client.session
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)  # noqa: SLF001 - see above
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)  # noqa: SLF001
    return mcp_types.CreateTaskResult.model_validate(raw, by_name=False).task


async def collect_task(
    client: Client, task: mcp_types.Task, *, on_status: TaskStatusCallback | None = None
) -> mcp_types.CallToolResult:
    """Poll `task` until it ends (at the interval the server asks for), then fetch its result.

    Unbounded on purpose: the caller's timeout bounds it. A task that failed or was cancelled
    still has its result fetched where the server keeps one (a tool error it reports as a
    result); one that does not becomes an error result saying how the task ended.
    """
    polls = 0
    while task.status not in TERMINAL:
        await anyio.sleep(poll_seconds(task.poll_interval))
        polls += 1
        task = await _get(client, task.task_id)
        if on_status is not None:
            await on_status(polls, _status_line(task))
    payload = mcp_types.GetTaskPayloadRequestParams(task_id=task.task_id)
    request = mcp_types.GetTaskPayloadRequest(params=payload)
    try:
        return await client.session.send_request(request, mcp_types.CallToolResult)
    except MCPError:
        if task.status == "completed":
            raise  # a completed task without its result is the server's fault: the call fails as such
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=_status_line(task))], is_error=True
        )


async def cancel_task(client: Client, task_id: str) -> bool:
    """Ask the server to stop working on `task_id` (`tasks/cancel`, both eras); True once it
    acknowledged. Meant for a caller being cancelled: see `finish_cancelling`."""
    request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id))
    return await finish_cancelling(send_cancel(client.session, task_id, request))


async def finish_cancelling(cancel: Awaitable[bool]) -> bool:
    """Run `cancel` (a `tasks/cancel`, bounded by CANCEL_BOUND_S) to its end, and never raise.

    It runs as its caller is being cancelled, maybe again and again (a task group delivers its
    cancellation until the task ends): the request goes out from a task of its own, and the
    caller waits for it to end, which the bound keeps short. The caller's own outcome (a
    timeout, a stop) is then what is reported.
    """
    job = asyncio.ensure_future(cancel)
    while not job.done():
        try:
            await asyncio.shield(job)
        except asyncio.CancelledError:
            continue  # the cancellation that brought us here; the caller raises it once this ends
    return job.result()


async def send_cancel(session: ClientSession, task_id: str, request: mcp_types.Request[Any, Any]) -> bool:
    """Send `request` (a `tasks/cancel` of either era), bounded by CANCEL_BOUND_S; True once acknowledged."""
    with anyio.move_on_after(CANCEL_BOUND_S):
        try:
            await session.send_request(request, mcp_types.EmptyResult)
            return True
        except Exception as exc:  # a server without tasks/cancel, or one already gone
            logger.info("tasks/cancel of task %s was not acknowledged: %s", task_id, exc)
            return False
    logger.info("tasks/cancel of task %s was not answered within %g s", task_id, CANCEL_BOUND_S)
    return False


@asynccontextmanager
async def abandoned_cancels(cancel: Callable[[], Awaitable[bool]]) -> AsyncIterator[None]:
    """A cancellation of the body (the call's timeout, a stop) runs `cancel` (`tasks/cancel` of
    the body's task) before it goes on, unless the host is going down (`kept_while`)."""
    try:
        yield
    except anyio.get_cancelled_exc_class():
        going_down = _kept.get()
        if going_down is None or not going_down():
            await cancel()
        raise


async def _get(client: Client, task_id: str) -> mcp_types.GetTaskResult:
    request = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, mcp_types.GetTaskResult)


async def resume_task(
    client: Client, task_id: str, *, on_status: TaskStatusCallback | None = None
) -> mcp_types.CallToolResult:
    """Collect the result of a task started earlier (by a host since restarted), without calling again.

    A task the server no longer knows (expired, or lost with a server that keeps tasks in
    memory) is a protocol error the caller reports like any failed call: never a new call,
    which could do the work twice.
    """
    async with abandoned_cancels(partial(cancel_task, client, task_id)):
        task = await _get(client, task_id)
        if on_status is not None:
            await on_status(0, _status_line(task))
        return await collect_task(client, task, on_status=on_status)


async def call_as_task(
    client: Client,
    tool: str,
    arguments: dict[str, object],
    *,
    meta: mcp_types.RequestParamsMeta | None,
    on_status: TaskStatusCallback | None = None,
    on_started: TaskStarted | None = None,
) -> mcp_types.CallToolResult:
    """Call `tool` as a task and wait (unbounded: the caller bounds it) for its result."""
    task = await start_task(client, tool, arguments, meta=meta)
    async with abandoned_cancels(partial(cancel_task, client, task.task_id)):
        if on_started is not None:
            await on_started(task.task_id)
        if on_status is not None:
            await on_status(0, _status_line(task))
        return await collect_task(client, task, on_status=on_status)
