"""The task methods on the wire, both protocol eras (issue 35, item 6; the tasks are `tasks.py`'s).

2025-11-25 (core "tasks", handshake era): the server declares `capabilities.tasks` (list, cancel,
`tools/call`) and lists `invoke_agent` with `execution.taskSupport: "optional"`; a `tools/call`
carrying `task` answers a `CreateTaskResult` at once; `tasks/get`, `tasks/result` (blocks until
the run ends, then the CallToolResult a plain call returns), `tasks/list` and `tasks/cancel`.

2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): see `task_extension.py`;
`tasks/get` and `tasks/cancel` are one method each for both eras, so they are answered here,
in the shape of the era the request came in.

Every method answers only the caller who started the task: anyone else's task is "no task" (-32602),
as an unknown id is. The SDK (2.3) has no server side for tasks: the methods are registered as
custom request handlers, and the task-augmented `tools/call` is answered by a middleware, since
the SDK checks a `tools/call` handler's answer against `CallToolResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as wire
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from backend.auth import Principal, Role
from backend.domain.errors import DomainError, NotFound
from backend.gateway.callers import CallerOf, require
from backend.gateway.elicitation import (
    RELATED_TASK,
    TaskAsker,
    answer_first,
    client_elicits,
    decision_from_response,
    input_request,
)
from backend.gateway.tasks import POLL_INTERVAL_MS, GatewayTasks, TaskState, iso

HANDSHAKE_TASKS_VERSION = "2025-11-25"
"""The one handshake-era version with tasks in the core protocol."""
TASK_TOOL = "invoke_agent"
LIST_PAGE = 50

ArgumentsOf = Callable[[dict[str, Any]], dict[str, Any]]
"""invoke_agent's arguments checked as a plain call checks them (ValidationError else)."""
ContextOf = Callable[[ServerRequestContext[Any, Any]], Context]


def tasks_capability() -> dict[str, Any]:
    """`capabilities.tasks` of 2025-11-25: list, cancel, and task-augmented `tools/call`."""
    capability = wire.ServerTasksCapability(
        list=wire.TasksListCapability(),
        cancel=wire.TasksCancelCapability(),
        requests=wire.ServerTasksRequestsCapability(tools=wire.TasksToolsCapability(call=wire.TasksCallCapability())),
    )
    return capability.model_dump(by_alias=True, mode="json", exclude_none=True)


def no_task(task_id: str) -> MCPError:
    return MCPError(code=wire.INVALID_PARAMS, message=f"no task {task_id!r}", data={"taskId": task_id})


def modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def check_routing_name(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """2026-07-28 over HTTP: an `Mcp-Name` header on a task method must name the body's task
    (SEP-2663 routes a task's requests by it; the SDK checks the header on tools, prompts and
    resources only). A request without one is let through: stdio has no headers to send."""
    headers = getattr(ctx.request, "headers", None)
    named = decode_header_value(headers.get(MCP_NAME_HEADER)) if headers is not None else None
    if named is not None and named != task_id:
        raise MCPError(
            code=wire.HEADER_MISMATCH,
            message=f"the Mcp-Name header ({named!r}) does not name the request's task ({task_id!r})",
        )


class UpdateTaskParams(wire.RequestParams):
    """2026-07-28 `tasks/update`: answers to the task's input requests, by key."""

    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


class TaskMethods:
    """The task methods of one gateway server."""

    def __init__(self, tasks: GatewayTasks, *, caller: CallerOf, context_of: ContextOf, arguments_of: ArgumentsOf):
        self.tasks = tasks
        self._caller = caller
        self._context_of = context_of
        self._arguments_of = arguments_of

    def principal(self, ctx: ServerRequestContext[Any, Any], role: Role = "viewer") -> Principal:
        """The caller, as a tool call names it; a protocol error when there is none, or too weak a one."""
        try:
            return require(self._caller, self._context_of(ctx), role)
        except ToolError as exc:
            raise MCPError(code=wire.INVALID_REQUEST, message=str(exc)) from None

    async def start(self, ctx: ServerRequestContext[Any, Any], params: wire.CallToolRequestParams) -> TaskState:
        """Start `invoke_agent` as a task; a call that a plain call would refuse is refused here
        as a protocol error (there is no task to report it on)."""
        if params.name != TASK_TOOL:
            raise MCPError(code=wire.METHOD_NOT_FOUND, message=f"{params.name} does not run as a task")
        caller = self.principal(ctx, "approver")
        try:
            arguments = self._arguments_of(params.arguments or {})
        except ValidationError as exc:
            fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})
            raise MCPError(code=wire.INVALID_PARAMS, message=f"invalid arguments: {', '.join(fields)}") from None
        ttl = params.task.ttl if params.task is not None else None
        try:
            return await self.tasks.start(caller=caller, arguments=arguments, ttl_ms=ttl)
        except (DomainError, ToolError) as exc:
            raise MCPError(code=wire.INVALID_PARAMS, message=str(exc)) from None

    async def _mine(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> tuple[Principal, TaskState]:
        if modern(ctx):
            check_routing_name(ctx, task_id)
        caller = self.principal(ctx)
        try:
            task = await self.tasks.find(task_id, caller=caller)
        except NotFound:
            raise no_task(task_id) from None
        return caller, await self.tasks.state(task)

    # 2025-11-25

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Declare the tasks capability at `initialize`; answer a task-augmented `tools/call`."""
        if ctx.method == "initialize":
            result = await call_next(ctx)
            if isinstance(result, dict) and result.get("protocolVersion") == HANDSHAKE_TASKS_VERSION:
                capabilities = dict(result.get("capabilities") or {})
                capabilities["tasks"] = tasks_capability()
                result = {**result, "capabilities": capabilities}
            return result
        if ctx.method != "tools/call" or ctx.protocol_version != HANDSHAKE_TASKS_VERSION:
            return await call_next(ctx)
        if not isinstance(ctx.params, dict) or ctx.params.get("task") is None:
            return await call_next(ctx)
        try:
            params = wire.CallToolRequestParams.model_validate(ctx.params, by_name=False)
        except ValidationError:
            return await call_next(ctx)  # the SDK answers a malformed call as it always does
        state = await self.start(ctx, params)
        created = wire.CreateTaskResult(task=wire.Task.model_validate(state.fields(), by_name=False))
        return created.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def get(self, ctx: ServerRequestContext[Any, Any], params: wire.GetTaskRequestParams) -> dict[str, Any]:
        """`tasks/get`: the task as it stands (2026: with its result, or what it waits for)."""
        _, state = await self._mine(ctx, params.task_id)
        return detailed(state) if modern(ctx) else state.fields()

    async def result(self, ctx: ServerRequestContext[Any, Any], params: wire.GetTaskPayloadRequestParams) -> dict[str, Any]:
        """`tasks/result` (2025-11-25): wait for the run to end, then what a plain call returns.

        Meanwhile a client that elicits is asked about each approval the run waits for, the
        request tagged with the task: the spec's way out of `input_required`.
        """
        caller, state = await self._mine(ctx, params.task_id)
        asker = None
        if not state.ended and client_elicits(self._context_of(ctx)) and ctx.session.can_send_request:
            asker = TaskAsker(ctx, self.tasks.services.approvals, caller, task_id=state.task.id)
        ended = await self.tasks.outcome(state.task, asker=asker)
        assert ended.result is not None
        tagged = ended.result.model_copy(update={"meta": {**(ended.result.meta or {}), RELATED_TASK: {"taskId": ended.task.id}}})
        return tagged.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def list(self, ctx: ServerRequestContext[Any, Any], params: wire.PaginatedRequestParams) -> dict[str, Any]:
        """`tasks/list` (2025-11-25): the caller's own tasks, newest first, a page at a time."""
        caller = self.principal(ctx)
        cursor = params.cursor if params is not None else None
        if cursor is not None and not cursor.isdigit():
            raise MCPError(code=wire.INVALID_PARAMS, message=f"not a cursor of tasks/list: {cursor!r}")
        offset = int(cursor or 0)
        page = await self.tasks.list(caller=caller, limit=LIST_PAGE + 1, offset=offset)
        more = len(page) > LIST_PAGE
        listed: dict[str, Any] = {"tasks": [s.fields() for s in page[:LIST_PAGE]]}
        if more:
            listed["nextCursor"] = str(offset + LIST_PAGE)
        return listed

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: wire.CancelTaskRequestParams) -> dict[str, Any]:
        """`tasks/cancel`: stop the session as the dashboard's stop does.

        2025-11-25 answers the task, now `cancelled`, and refuses a task that already ended
        (-32602); the 2026 extension acknowledges with an empty result either way.
        """
        caller, state = await self._mine(ctx, params.task_id)
        if state.ended:
            if modern(ctx):
                return {}
            raise MCPError(code=wire.INVALID_PARAMS, message=f"task {params.task_id} already ended {state.status}")
        try:
            cancelled = await self.tasks.cancel(state.task, by=caller)
        except ValueError as exc:  # it ended meanwhile
            if modern(ctx):
                return {}
            raise MCPError(code=wire.INVALID_PARAMS, message=str(exc)) from None
        return {} if modern(ctx) else cancelled.fields()

    # 2026-07-28

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        """`tasks/update`: answers to the approvals the task waits for; others are ignored."""
        caller, state = await self._mine(ctx, params.task_id)
        waiting = {a.id: a for a in state.waiting or []}
        for key, raw in params.input_responses.items():
            approval = waiting.get(key)
            if approval is None:
                continue
            try:
                response = wire.ElicitResult.model_validate(raw, by_name=False)
            except ValidationError:
                continue
            decision = decision_from_response(response, kind=approval.kind)
            if decision is not None:
                await answer_first(self.tasks.services.approvals, key, decision, caller)
        return {}


def detailed(state: TaskState) -> dict[str, Any]:
    """2026-07-28: the extension's `DetailedTask` for a task as it stands.

    The extension's `failed` is for JSON-RPC errors only; a run that ended in error is a tool
    error, so its task is `completed` with a result whose `isError` says so.
    """
    status = state.status
    if status == "failed":
        status = "completed"
    shaped: dict[str, Any] = {
        "taskId": state.task.id,
        "status": status,
        "createdAt": iso(state.task.created_at),
        "lastUpdatedAt": iso(max(state.task.updated_at, state.changed or state.task.updated_at)),
        "ttlMs": state.task.ttl_ms,
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if state.message:
        shaped["statusMessage"] = state.message
    if status == "completed" and state.result is not None:
        shaped["result"] = state.result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if status == "input_required":
        shaped["inputRequests"] = {
            a.id: input_request(a).model_dump(by_alias=True, mode="json", exclude_none=True)
            for a in state.waiting or []
        }
    return shaped


_MODERN = frozenset(MODERN_PROTOCOL_VERSIONS)
_HANDSHAKE = frozenset({HANDSHAKE_TASKS_VERSION})

METHODS: list[tuple[str, type[BaseModel], str, frozenset[str]]] = [
    ("tasks/get", wire.GetTaskRequestParams, "get", _HANDSHAKE | _MODERN),
    ("tasks/cancel", wire.CancelTaskRequestParams, "cancel", _HANDSHAKE | _MODERN),
    ("tasks/result", wire.GetTaskPayloadRequestParams, "result", _HANDSHAKE),
    ("tasks/list", wire.PaginatedRequestParams, "list", _HANDSHAKE),
    ("tasks/update", UpdateTaskParams, "update", _MODERN),
]
"""Each task method: its name, its params, the `TaskMethods` method answering it, and the
protocol versions it is served at."""
