"""One configured MCP server under supervision: start it, list its tools, restart it when it dies.

`ServerRunner.run()` is a long-lived task that owns the server's `mcp.Client`: anyio cancel
scopes must be entered and left in the same task, so the client lives and dies there, while
calls from any session's task go through it concurrently.
"""

from __future__ import annotations

import logging
import math
import shlex
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from backend.domain.tools import ToolInfo, ToolResult
from backend.mcp.catalog import list_tools
from backend.mcp.config import McpServerConfig
from backend.mcp.errors import McpPoolError, ToolNotFound
from backend.mcp.transport import StdioProcessTransport, log_tail
from backend.paths import private_opener

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "error", "stopped"]

MAX_RESTARTS = 5
"""Crashes tolerated within RESTART_WINDOW seconds; one more and the server stays in "error"."""
RESTART_WINDOW = 60.0
RESTART_BACKOFF = (0.2, 1.0, 2.0, 4.0, 8.0)
"""Seconds before the 1st, 2nd, ... restart within the window, so a crash loop cannot spin."""


@dataclass(kw_only=True)
class ServerStatus:
    """A server as the dashboard and the engine see it."""

    name: str
    state: ServerState
    error: str | None
    tools: list[ToolInfo]
    pid: int | None
    restarts: int


@dataclass(kw_only=True)
class _Connection:
    """One live server process and what it offered when it started."""

    client: Client
    transport: StdioProcessTransport
    tools: dict[str, ToolInfo]


class ServerRunner:
    """Supervises one server: states starting -> ready (-> starting on a crash) -> error | stopped."""

    def __init__(self, name: str, config: McpServerConfig, *, log_path: Path) -> None:
        self.name = name
        self.config = config
        self.log_path = log_path
        self.state: ServerState = "stopped"
        self.error: str | None = "disabled in the configuration" if config.disabled else None
        self.tools: dict[str, ToolInfo] = {}
        """Tools by their name on the server; kept from the last start while restarting."""
        self.pid: int | None = None
        self.restarts = 0
        self._conn: _Connection | None = None
        self._stopping = False
        # Created in prepare(): anyio events need a running event loop.
        self._changed: anyio.Event | None = None
        self._stop: anyio.Event | None = None

    def status(self) -> ServerStatus:
        """A snapshot of this server's state."""
        state, error = self.current_state()
        return ServerStatus(
            name=self.name,
            state=state,
            error=error,
            tools=list(self.tools.values()),
            pid=self.pid if state == "ready" else None,
            restarts=self.restarts,
        )

    def current_state(self) -> tuple[ServerState, str | None]:
        """The state and error, true even between a process's death and the supervisor noticing."""
        conn = self._conn
        if self.state == "ready" and conn is not None and conn.transport.lost.is_set():
            return "starting", "crashed; restarting"
        return self.state, self.error

    def prepare(self) -> None:
        """Get ready to run; from here on calls wait for the server instead of failing."""
        self._changed = anyio.Event()
        self._stop = anyio.Event()
        if not self.config.disabled:
            self._set("starting")

    def request_stop(self) -> None:
        """Ask `run()` to stop the process and return."""
        self._stopping = True
        if self._stop is not None:
            self._stop.set()

    def _set(self, state: ServerState, *, error: str | None = None) -> None:
        self.state = state
        self.error = error
        assert self._changed is not None
        # Wake everyone waiting for a change, then give later waiters a fresh event.
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_settled(self) -> None:
        """Wait until the server is no longer starting (ready, error or stopped)."""
        while self.current_state()[0] == "starting":
            assert self._changed is not None
            await self._changed.wait()

    async def run(self) -> None:
        """Run the server until stopped, restarting it after a crash with a bounded backoff."""
        crashes: deque[float] = deque()
        while not self._stopping:
            try:
                lost = await self._run_process_until_stop()
            except _StartFailed as exc:
                self._set("error", error=str(exc))
                return
            except Exception as exc:  # a bug here must not take the other servers down with it
                logger.exception("supervising MCP server %r failed", self.name)
                self._set("error", error=f"internal error while supervising the server: {exc!r}")
                return
            if not lost or self._stopping:
                break
            now = anyio.current_time()
            crashes.append(now)
            while now - crashes[0] > RESTART_WINDOW:
                crashes.popleft()
            if len(crashes) > MAX_RESTARTS:
                self._set(
                    "error",
                    error=f"crashed {len(crashes)} times within {RESTART_WINDOW:g} s; "
                    f"not restarting it (see {self.log_path})",
                )
                return
            assert self._stop is not None
            with anyio.move_on_after(RESTART_BACKOFF[min(len(crashes), len(RESTART_BACKOFF)) - 1]):
                await self._stop.wait()
            if not self._stopping:
                self.restarts += 1
        self._set("stopped")

    async def _run_process_until_stop(self) -> bool:
        """`_run_process`, cut short (its process stopped) as soon as a stop is requested."""
        assert self._stop is not None
        stop = self._stop
        lost = False
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:

            async def cancel_on_stop() -> None:
                await stop.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(cancel_on_stop)
            try:
                lost = await self._run_process()
            # Re-raised below, outside the task group, which would wrap it in a group.
            except Exception as exc:  # noqa: BLE001
                failure = exc
            finally:
                self._conn = None
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return lost

    async def _run_process(self) -> bool:
        """Start one process and serve it; True when it died, False when asked to stop."""
        self._set("starting", error=self.error if self.state == "starting" else None)
        self.pid = None
        # A local append-open, once per start: not worth a worker thread.
        with open(self.log_path, "ab", buffering=0, opener=private_opener) as log:  # noqa: ASYNC230
            log_start = log.tell()
            command = shlex.join([self.config.command, *self.config.args])
            log.write(f"--- {datetime.now().isoformat(timespec='seconds')} starting: {command}\n".encode())
            transport = StdioProcessTransport(
                command=self.config.command,
                args=self.config.args,
                env=self.config.process_env(),
                cwd=self.config.cwd,
                errlog=log,
            )
            started = False
            start_error: str | None = None
            # The start deadline is a scope around the client's whole life, lifted once started:
            # the client's task groups must nest inside it (a `fail_after` around `__aenter__`
            # alone would be exited while they are still open).
            deadline = anyio.current_time() + self.config.start_timeout
            try:
                with anyio.CancelScope(deadline=deadline) as start_scope:
                    async with Client(transport, cache=None) as client:
                        tools = await list_tools(client, self.name)
                        start_scope.deadline = math.inf
                        started = True
                        self._conn = _Connection(client=client, transport=transport, tools=tools)
                        self.tools, self.pid = tools, transport.pid
                        self._set("ready")
                        logger.info("MCP server %r ready (pid %s, %d tools)", self.name, self.pid, len(tools))
                        await transport.lost.wait()
                        # Say so before the (bounded, but not instant) teardown below.
                        self._conn, self.pid = None, None
                        if not self._stopping:
                            self._set("starting", error="crashed; restarting")
                if not started:
                    start_error = f"did not start within {self.config.start_timeout:g} s"
            # Anything that stops a start is a start error (the client may wrap it in a group).
            except Exception as exc:
                if started:
                    raise
                start_error = self._describe_start_failure(exc, transport)
            # The client is closed: the process is stopped and its exit code known.
            if start_error is not None:
                if transport.returncode is not None and transport.lost.is_set():
                    start_error += f" (exit code {transport.returncode})"
                raise _StartFailed(
                    f"MCP server {self.name!r} {start_error}{log_tail(self.log_path, log_start)}"
                )
        if self._stopping:
            return False
        reason = f"crashed (exit code {transport.returncode}); restarting"
        logger.warning("MCP server %r %s", self.name, reason)
        self._set("starting", error=reason)
        return True

    def _describe_start_failure(self, exc: Exception, transport: StdioProcessTransport) -> str:
        leaves = _leaf_exceptions(exc)
        logger.debug("MCP server %r failed to start", self.name, exc_info=exc)
        if transport.pid is None:
            os_errors = [e for e in leaves if isinstance(e, OSError)]
            reason = (os_errors[0].strerror or str(os_errors[0])) if os_errors else str(leaves[0])
            return f"could not launch {self.config.command!r}: {reason}"
        if transport.lost.is_set():
            return "exited while starting"
        return f"failed to start: {leaves[0]!r}"

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        meta: mcp_types.RequestParamsMeta,
        timeout: float | None,
        full_name: str,
    ) -> mcp_types.CallToolResult | ToolResult:
        """Call `tool` on the live process, waiting (bounded) for a start or restart first.

        What the model should read comes back as an error `ToolResult`; a tool the server does
        not offer raises `ToolNotFound`.
        """
        conn = await self._connection()
        if isinstance(conn, ToolResult):
            return conn
        if tool not in conn.tools:
            raise ToolNotFound(full_name, f"MCP server {self.name!r} has no tool {tool!r}")
        limit = timeout if timeout is not None else self.config.call_timeout
        with anyio.move_on_after(limit):
            try:
                return await conn.client.call_tool(tool, arguments, meta=meta)
            except (MCPError, ValidationError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                if self._stopping:
                    return ToolResult.error(f"MCP server '{self.name}' was stopped while running '{tool}'.")
                if conn.transport.lost.is_set():
                    return ToolResult.error(
                        f"MCP server '{self.name}' crashed while running '{tool}'; it is being restarted "
                        "(unless it keeps crashing), so the tool can be called again. "
                        "Whether this call took effect is unknown."
                    )
                # A protocol-level refusal (bad request, invalid result): the model may fix its call.
                return ToolResult.error(f"MCP server '{self.name}' failed to run '{tool}': {exc}")
        # Leaving the scope cancelled the request, which tells the server to stop working on it.
        return ToolResult.error(f"tool '{full_name}' timed out after {limit:g} s")

    async def _connection(self) -> _Connection | ToolResult:
        if self._changed is None:
            raise McpPoolError("the MCP pool has not been started")
        with anyio.move_on_after(self.config.start_timeout):
            while True:
                conn = self._conn
                # A dead connection is not used even before the supervisor notices the death.
                if self.state == "ready" and conn is not None and not conn.transport.lost.is_set():
                    return conn
                if self.state == "error":
                    return ToolResult.error(f"MCP server '{self.name}' is not available: {self.error}")
                if self.state == "stopped":
                    return ToolResult.error(f"MCP server '{self.name}' is stopped.")
                await self._changed.wait()
        return ToolResult.error(
            f"MCP server '{self.name}' did not become ready within {self.config.start_timeout:g} s."
        )


class _StartFailed(Exception):
    """The server could not be started; the message says why."""


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaf_exceptions(inner)]
    return [exc]
