"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the gateway, and the task
methods of both eras registered through it (issue 35, item 6).

On 2026-07-28 a client that declares the extension in a request's capabilities and calls
`invoke_agent` gets a task (`resultType: "task"`) at once; the server decides, the call carries
no flag. It polls `tasks/get`, which carries the result once the run ended, or, while an
approval waits, the approval as an elicitation in `inputRequests`, answered with `tasks/update`
(or anywhere else an approval is answered: the first answer counts). `tasks/cancel` stops the run.
A client that does not declare the extension gets the plain, blocking call, as before; so does
a call the plain path would refuse (it gets the tool's error result), and a retry round of a
plain call begun earlier (it carries `requestState` or `inputResponses`).

The SDK's extension interface registers the methods of both eras: `tasks/get` and `tasks/cancel`
share a name across them, and one name has one handler (`task_methods.py` answers in the
request's era). The extension also appears in `capabilities.extensions`, where the 2026 spec
has clients look for it; a handshake-era client reads `capabilities.tasks` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as wire
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, RequestHandler
from mcp.shared.exceptions import MCPError

from backend.gateway.task_methods import METHODS, TASK_TOOL, TaskMethods, detailed, modern

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def client_declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension (the only way to get a task)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.extensions if capabilities is not None else None
    return bool(declared) and TASKS_EXTENSION in declared


class TasksExtension(Extension):
    """Serves the task methods; on 2026-07-28 turns an `invoke_agent` call into a task."""

    identifier = TASKS_EXTENSION

    def __init__(self) -> None:
        self._methods: TaskMethods | None = None

    def bind(self, methods: TaskMethods) -> None:
        """The server's task methods, known once the server is built (it is built with this)."""
        self._methods = methods

    @property
    def bound(self) -> TaskMethods:
        assert self._methods is not None, "TasksExtension.bind was not called"
        return self._methods

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding(method=name, params_type=params, handler=self._late(attr), protocol_versions=versions)
            for name, params, attr, versions in METHODS
        ]

    def _late(self, attr: str) -> RequestHandler:
        """The handler of one method, found on the task methods when a request comes."""

        async def handle(ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
            return await getattr(self.bound, attr)(ctx, params)

        return handle

    async def intercept_tool_call(
        self, params: wire.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name != TASK_TOOL or not modern(ctx) or not client_declares_tasks(ctx):
            return await call_next(ctx)
        if params.request_state is not None or params.input_responses is not None:
            return await call_next(ctx)  # a round of a plain call begun earlier: it stays one
        try:
            state = await self.bound.start(ctx, params)
        except MCPError:
            # Refused before anything started (no role, bad arguments, a busy session): no task
            # then, and the plain call refuses as it always does, with the tool's error result.
            return await call_next(ctx)
        return {"resultType": "task", **detailed(state)}
