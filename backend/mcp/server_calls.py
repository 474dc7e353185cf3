"""Calling a tool on a supervised server: waiting for it to be ready, one attempt (retried once
where it cannot have run), timeouts that mark a server hung, and what a failure tells the model.

A mixin of ServerRunner (backend/mcp/server.py), which supervises the process: this half only
reads the state the supervisor keeps, and asks it for an early reconnect.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from backend.domain.tools import ToolResult
from backend.mcp import call_clock
from backend.mcp.call_failures import failed_call, hung_notice, not_taken
from backend.mcp.connection import Connection
from backend.mcp.errors import McpPoolError, ToolNotFound
from backend.mcp.remote import CallAttempt, RemoteTransport, current_attempt
from backend.mcp import task_extension
from backend.mcp.tasks import TaskStarted, call_as_task, resume_task

if TYPE_CHECKING:
    from backend.mcp.config import McpServerConfig
    from backend.mcp.roots import WorkspaceRoots

logger = logging.getLogger("backend.mcp.server")  # one logger for the server's supervision and calls

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
"""Told each `notifications/progress` of a call: progress, total (if known), message."""


def clock_bound_to(deadline: asyncio.Timeout) -> AbstractContextManager[None]:
    """The running call's clock moving `deadline`; nothing outside a pool call (a direct test call)."""
    clock = call_clock.current()
    return clock.bound(deadline) if clock is not None else nullcontext()


class _Retry:
    """The marker of an attempt the server cannot have run: try once more on a new connection."""


_RETRY = _Retry()


class ServerCalls:
    """The call path of a ServerRunner; the attributes below are the supervisor's."""

    name: str
    config: McpServerConfig
    state: str
    error: str | None
    hang_after: int
    roots: WorkspaceRoots
    _conn: Connection | None
    _changed: anyio.Event | None
    _retry_now: anyio.Event | None
    _stopping: bool

    async def _announce_roots(self, conn: Connection) -> None:
        """Tell a handshake-era server that its roots changed, if they did since it was last given them."""
        if conn.roots_given is None or not conn.handshake_era:
            return  # before `current()`, which sorts the workspaces in flight: most calls need not
        roots = self.roots.current()
        if roots == conn.roots_given:
            return
        conn.roots_given = roots
        # A dead stream is the call's to report, just below.
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await conn.client.session.send_notification(mcp_types.RootsListChangedNotification())

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        workspace: Path,
        meta: mcp_types.RequestParamsMeta | None,
        timeout: float | None,
        full_name: str,
        on_progress: ProgressCallback | None = None,
        on_task: TaskStarted | None = None,
        resume: str | None = None,
    ) -> mcp_types.CallToolResult | ToolResult:
        """Call `tool` on the live process, waiting (bounded) for a start or restart first.

        `workspace` is offered to the server as its root while the call runs; the server's
        progress reports go to `on_progress` (a failing one is logged, never the call's). What the model
        should read comes back as an error `ToolResult`; a tool the server does not offer
        raises `ToolNotFound`. A tool that must run as a task tells `on_task` its task's id once
        the server created it; `resume` (such an id) collects that task's result instead of calling.
        """
        if self.config.is_remote:
            # The host's per-call context (workspace path, session id) is for servers on this
            # machine; a third party over the network is not told it.
            meta = None
        with self.roots.calling(workspace):
            for retry in (False, True):
                conn = await self._connection()
                if isinstance(conn, ToolResult):
                    return conn
                if tool not in conn.tools:
                    raise ToolNotFound(full_name, f"MCP server {self.name!r} has no tool {tool!r}")
                result = await self._call(
                    conn, tool, arguments, meta=meta, timeout=timeout, full_name=full_name, on_progress=on_progress,
                    retry=retry, on_task=on_task, resume=resume,
                )
                if result is not _RETRY:
                    return result
        raise AssertionError("unreachable: a call is retried once at most")

    async def _call(
        self,
        conn: Connection,
        tool: str,
        arguments: dict[str, Any],
        *,
        meta: mcp_types.RequestParamsMeta | None,
        timeout: float | None,
        full_name: str,
        on_progress: ProgressCallback | None,
        retry: bool,
        on_task: TaskStarted | None = None,
        resume: str | None = None,
    ) -> mcp_types.CallToolResult | ToolResult | _Retry:
        """One attempt; `_RETRY` when a remote server cannot have run it (refused, session expired)."""

        # Always a callback: it is what makes the SDK send a progressToken with the call.
        async def progress(value: float, total: float | None, message: str | None) -> None:
            if on_progress is None:
                return
            try:
                await on_progress(value, total, message)
            except Exception:
                logger.exception("passing on progress of %r failed", full_name)

        async def status(polls: int, line: str) -> None:
            await progress(polls, None, line)

        limit = timeout if timeout is not None else self.config.call_timeout
        attempt = CallAttempt()
        token = current_attempt.set(attempt)
        try:
            # asyncio's timeout, not anyio's cancel scope: the same cancellation of the request
            # (the SDK tells the server to stop), at a fifth of the cost on every call.
            # The call's clock stops while a person is asked on its behalf (call_clock.py).
            async with asyncio.timeout(limit) as deadline:
                with clock_bound_to(deadline):
                    try:
                        await self._announce_roots(conn)
                        if resume is not None:
                            collect = resume_task if conn.handshake_era else task_extension.resume_task
                            result = await collect(conn.client, resume, on_status=status)
                        elif conn.task_modes.get(tool) == "required":
                            # A plain call would be refused: run it as a task, its status shown as progress.
                            result = await call_as_task(
                                conn.client, tool, arguments, meta=meta, on_status=status, on_started=on_task
                            )
                        else:
                            # On a 2026-07-28 connection the server may answer with a task (the tasks
                            # extension): told as a handshake-era task is, see task_extension.py.
                            with task_extension.watching(on_started=on_task, on_status=status):
                                result = await conn.client.call_tool(
                                    tool, arguments, meta=meta, progress_callback=progress
                                )
                        conn.timeouts = 0
                        return result
                    except (MCPError, ValidationError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                        return self._failure(conn, tool, exc, attempt, retry=retry)
        except TimeoutError:
            if not deadline.expired():
                raise
        finally:
            current_attempt.reset(token)
        # Leaving the scope cancelled the request, which tells the server to stop working on it.
        timed_out = f"tool '{full_name}' timed out after {limit:g} s"
        self._note_timeout(conn)
        if conn.hung is not None:
            return ToolResult.error(
                f"{timed_out}; {self._hung_notice(conn)}. "
                "The tool can be called again once the server is back."
            )
        return ToolResult.error(timed_out)

    def _failure(
        self, conn: Connection, tool: str, exc: Exception, attempt: CallAttempt, *, retry: bool
    ) -> ToolResult | _Retry:
        """What a failed call means for the model, or `_RETRY` where running it again is safe."""
        if self._stopping:
            return ToolResult.error(f"MCP server '{self.name}' was stopped while running '{tool}'.")
        transport = conn.transport
        if isinstance(transport, RemoteTransport) and attempt.cannot_have_run(transport):
            return _RETRY if not retry else not_taken(self.name, tool, attempt)
        if conn.hung is None and not transport.lost.is_set():
            # A protocol-level refusal (bad request, invalid result): the model may fix its call.
            conn.timeouts = 0  # an answer all the same: the server is alive
        return failed_call(self.name, tool, exc, transport=transport, hung=conn.hung)

    def _hung_notice(self, conn: Connection) -> str:
        return hung_notice(self.name, conn.hung or "")

    def _note_timeout(self, conn: Connection) -> None:
        """Count a timeout on `conn`, and kill its process once it looks hung (see HANG_AFTER)."""
        if conn.hung is not None or conn.transport.lost.is_set():
            return  # already dead or being replaced: nothing more to learn from it
        conn.timeouts += 1
        if conn.timeouts < self.hang_after:
            return
        conn.hung = f"stopped answering ({conn.timeouts} calls in a row timed out)"
        logger.warning("MCP server %r %s; killing pid %s", self.name, conn.hung, conn.transport.pid)
        # Its death is then handled as a crash's is: `run()` restarts it and every call still
        # pending on it fails with the reason above.
        conn.transport.kill()

    async def _connection(self) -> Connection | ToolResult:
        if self._changed is None:
            raise McpPoolError("the MCP pool has not been started")
        conn = self._conn
        if self.state == "ready" and conn is not None and not conn.transport.lost.is_set():
            return conn  # the common case, without a cancel scope to enter and leave
        nudged = False
        with anyio.move_on_after(self.config.start_timeout):
            while True:
                conn = self._conn
                # A dead connection is not used even before the supervisor notices the death.
                if self.state == "ready" and conn is not None and not conn.transport.lost.is_set():
                    return conn
                if self.state == "error" and self._retry_now is not None and not nudged:
                    nudged = True  # one attempt now, for this call, instead of at the end of the backoff
                    self._retry_now.set()
                    await self._changed.wait()
                    continue
                if self.state == "error":
                    return ToolResult.error(f"MCP server '{self.name}' is not available: {self.error}")
                if self.state == "stopped":
                    return ToolResult.error(f"MCP server '{self.name}' is stopped.")
                await self._changed.wait()
        return ToolResult.error(
            f"MCP server '{self.name}' did not become ready within {self.config.start_timeout:g} s."
        )
