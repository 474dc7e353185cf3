"""Calling a tool as a task (MCP 2025-11-25 tasks): a task-augmented `tools/call`, polling
`tasks/get` until the task ends, and the result fetched with `tasks/result`.

A tool whose listing says `execution.taskSupport: "required"` fails every plain call, so such a
tool is called this way; "optional" and "forbidden" tools stay plain calls. The polls run
inside the call's own timeout (server_calls.py), so a task that never ends is the call's
timeout like any slow tool; each status the server reports goes to the progress callback, which
is what the tool card shows while the call runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError

TaskSupport = Literal["forbidden", "optional", "required"]

TaskStatusCallback = Callable[[int, str], Awaitable[None]]
"""Told each status a running task reports: the number of the poll, and a line for a person."""

TaskStarted = Callable[[str], Awaitable[None]]
"""Told the task's id as soon as the server created it (to keep it with the call)."""

TASK_TTL_MS = 60 * 60 * 1000
"""How long the server is asked to keep a task after it is created: an hour, enough to collect a
result after a host restart. The server may keep it for less; it says so in `ttl`."""

_DEFAULT_POLL_S = 1.0
_MIN_POLL_S = 0.01  # a server's `pollInterval: 0` must not become a busy loop
_MAX_POLL_S = 30.0  # nor a huge one a call that never looks again
_TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


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
    if on_started is not None:
        await on_started(task.task_id)
    if on_status is not None:
        await on_status(0, _status_line(task))
    return await collect_task(client, task, on_status=on_status)
