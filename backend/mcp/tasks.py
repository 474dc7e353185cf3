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
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
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
_TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


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


def _poll_seconds(task: mcp_types.Task) -> float:
    if task.poll_interval is None:
        return _DEFAULT_POLL_S
    return min(max(task.poll_interval / 1000, _MIN_POLL_S), _MAX_POLL_S)


def _status_line(task: mcp_types.Task) -> str:
    return f"task {task.status}: {task.status_message}" if task.status_message else f"task {task.status}"


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
    while task.status not in _TERMINAL:
        await anyio.sleep(_poll_seconds(task))
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
    """Ask the server to stop working on `task_id`; True once it acknowledged.

    Best effort and bounded by CANCEL_BOUND_S; it never raises, so the caller's own outcome (a
    timeout, a stop) is what is reported. It runs as its caller is being cancelled, maybe again
    and again (a task group delivers its cancellation until the task ends): the request goes out
    from a task of its own, and the caller waits for it to end, which the bound keeps short.
    """
    job = asyncio.get_running_loop().create_task(_send_cancel(client, task_id))
    while not job.done():
        try:
            await asyncio.shield(job)
        except asyncio.CancelledError:
            continue  # the cancellation that brought us here; the caller raises it once this ends
    return job.result()


async def _send_cancel(client: Client, task_id: str) -> bool:
    request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id))
    with anyio.move_on_after(CANCEL_BOUND_S):
        try:
            await client.session.send_request(request, mcp_types.CancelTaskResult)
            return True
        except Exception as exc:  # a server without tasks/cancel, or one already gone
            logger.info("tasks/cancel of task %s was not acknowledged: %s", task_id, exc)
            return False
    logger.info("tasks/cancel of task %s was not answered within %g s", task_id, CANCEL_BOUND_S)
    return False


@asynccontextmanager
async def _cancelled_with_caller(client: Client, task_id: str) -> AsyncIterator[None]:
    """A cancellation of the body (the call's timeout, a stop) cancels the task too, unless the
    host is going down (`kept_while`)."""
    try:
        yield
    except anyio.get_cancelled_exc_class():
        going_down = _kept.get()
        if going_down is None or not going_down():
            await cancel_task(client, task_id)
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
    async with _cancelled_with_caller(client, task_id):
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
    async with _cancelled_with_caller(client, task.task_id):
        if on_started is not None:
            await on_started(task.task_id)
        if on_status is not None:
            await on_status(0, _status_line(task))
        return await collect_task(client, task, on_status=on_status)
