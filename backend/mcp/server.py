"""One configured MCP server under supervision: start it, list its tools, restart it when it dies or hangs.

`ServerRunner.run()` is a long-lived task that owns the server's `mcp.Client`: anyio cancel
scopes must be entered and left in the same task, so the client lives and dies there, while
calls from any session's task go through it concurrently.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Literal

import anyio
import mcp_types
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT, SamplingFnT

from backend.domain.tools import ToolInfo
from backend.mcp.catalog import list_tools
from backend.mcp.connection import Connection, TransportFactory
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_store import OAuthVault
from backend.mcp.remote import (
    RemoteTransport,
    display_url,
    open_transport,
    reconnect_delay,
)
from backend.mcp.roots import WorkspaceRoots, roots_result
from backend.mcp.server_calls import ServerCalls
from backend.mcp.task_extension import TasksExtension
from backend.mcp.tool_changes import Vet, follow_changes, listen_for_changes, on_message
from backend.mcp.transport import log_tail
from backend.paths import private_opener
from backend.sandbox.launcher import SandboxUnavailable

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "error", "stopped"]

MAX_RESTARTS = 5
"""Crashes tolerated within RESTART_WINDOW seconds; one more and the server stays in "error"."""
RESTART_WINDOW = 60.0
RESTART_BACKOFF = (0.2, 1.0, 2.0, 4.0, 8.0)
"""Seconds before the 1st, 2nd, ... restart within the window, so a crash loop cannot spin."""
CLIENT_INFO = mcp_types.Implementation(name="overseer", title="Overseer", version=version("overseer"))
"""Who the pool says it is to every server (`clientInfo`), rather than the SDK's default."""
HANG_AFTER = 3
"""Calls in a row that time out, with no answer to any call between them, before the server is
deemed hung and restarted. One timeout proves nothing (a slow tool, a too-short limit), and a
ping would not settle it: the SDK answers pings on its read loop even while every tool handler
is stuck (a deadlock, a blocked worker). Three timeouts across all sessions with nothing coming
back means the server no longer does its job, and a restart costs about a second."""




@dataclass(kw_only=True)
class ServerStatus:
    """A server as the dashboard and the engine see it."""

    name: str
    state: ServerState
    error: str | None
    tools: list[ToolInfo]
    pid: int | None
    restarts: int
    last_restart: str | None = None
    """Why the server was last restarted ("crashed (exit code 1)", "stopped answering ..."), if it was."""
    url: str | None = None
    """Where a remote server is (without credentials or query); None for a stdio server."""
    last_http_error: str | None = None
    """A remote server's last HTTP error ("HTTP 401 on POST", "cannot reach the server (...)")."""
    needs_sign_in: bool = False
    """A remote server in "error" because it wants an OAuth sign-in (`error` says how to give it)."""
    unreachable: str | None = None
    """Why a remote server cannot be reached ("name not found", "connection refused"), while it cannot."""


class ServerRunner(ServerCalls):
    """Supervises one server: states starting -> ready (-> starting on a crash or a hang) -> error | stopped.

    A hung server (HANG_AFTER calls in a row timed out) is killed and then restarted as a
    crashed one is; the calls pending on it get an error result saying so.
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        log_path: Path,
        hang_after: int = HANG_AFTER,
        on_tools_changed: Callable[[str], None] | None = None,
        elicitation_callback: ElicitationFnT | None = None,
        sampling_callback: SamplingFnT | None = None,
        oauth: OAuthVault | None = None,
        transport_factory: TransportFactory = open_transport,
        vet: Vet | None = None,
    ) -> None:
        """`vet` checks every listing of the tools before it is taken (tool_pins.py: the changed
        ones are marked). `on_tools_changed(name)` is called once a running server's new tool list is in `tools`;
        `elicitation_callback` answers the server's `elicitation/create` and `sampling_callback` its
        `sampling/createMessage` (without one, the SDK refuses the request and no capability is declared).
        `oauth` keeps remote servers' sign-ins (backend/mcp/oauth_client.py). `transport_factory`
        gives each start its transport (default: a process of its own, or HTTP)."""
        self.oauth = oauth
        self.transport_factory = transport_factory
        self.vet = vet
        self.needs_sign_in = False
        self.unreachable: str | None = None
        self.name = name
        self.on_tools_changed = on_tools_changed
        self.elicitation_callback = elicitation_callback
        self.sampling_callback = sampling_callback
        self.on_state_changed: Callable[[str], None] | None = None
        """Called with the name after every state change, for whoever shows servers live."""
        self.config = config
        self.log_path = log_path
        self.hang_after = hang_after
        self.state: ServerState = "stopped"
        self.error: str | None = "disabled in the configuration" if config.disabled else None
        self.tools: dict[str, ToolInfo] = {}
        """Tools by their name on the server; kept from the last start while restarting."""
        self.pid: int | None = None
        self.last_http_error: str | None = None
        self.restarts = 0
        self.last_restart: str | None = None
        self.roots = WorkspaceRoots()
        """The workspaces of this server's calls, which `roots/list` is answered with."""
        self._conn: Connection | None = None
        self._stopping = False
        # Created in prepare(): anyio events need a running event loop.
        self._changed: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._retry_now: anyio.Event | None = None
        """Set while a remote server waits to reconnect: a call sets it to try at once."""

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
            last_restart=self.last_restart,
            url=display_url(self.config.url) if self.config.url else None,
            last_http_error=self.last_http_error,
            # Kept while it tries again, so that the flag does not flicker with each attempt.
            needs_sign_in=self.needs_sign_in and state in ("error", "starting"),
            unreachable=self.unreachable if state in ("error", "starting") and not self.needs_sign_in else None,
        )

    def current_state(self) -> tuple[ServerState, str | None]:
        """The state and error, true even between a process's death and the supervisor noticing."""
        conn = self._conn
        if self.state == "ready" and conn is not None and conn.transport.lost.is_set():
            return "starting", f"{self._loss_cause(conn)}; {self._again}"
        return self.state, self.error

    def _loss_cause(self, conn: Connection) -> str:
        if isinstance(conn.transport, RemoteTransport):
            return conn.transport.cause or "the connection was lost"
        return conn.hung or "crashed"

    @property
    def _again(self) -> str:
        return "reconnecting" if self.config.is_remote else "restarting"

    def offers_tools(self) -> bool:
        """Whether the catalog lists this server's tools: when ready, and while it restarts.

        A call made during a restart waits for it (bounded by the start timeout), so dropping
        the tools meanwhile would only turn the next call into "Unknown tool".
        """
        return self.state in ("ready", "starting") and bool(self.tools)

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
        if self.on_state_changed is not None:
            self.on_state_changed(self.name)

    async def wait_settled(self) -> None:
        """Wait until the server is no longer starting (ready, error or stopped)."""
        while self.current_state()[0] == "starting":
            assert self._changed is not None
            await self._changed.wait()

    async def run(self) -> None:
        """Run the server until stopped, restarting it after a crash with a bounded backoff."""
        crashes: deque[float] = deque()
        failures = 0
        while not self._stopping:
            try:
                lost = await self._run_process_until_stop()
                failures = 0
            except _StartFailed as exc:
                if not self.config.is_remote:
                    self._set("error", error=str(exc))
                    return
                # A remote server that is down comes back by itself: keep trying, ever more slowly,
                # while its tools are unavailable and calls to it fail at once with the reason.
                failures += 1
                delay = reconnect_delay(failures)
                # A call arriving meanwhile cuts the wait short (`_connection`): a server that was
                # only restarting is then used at once, and one that is down fails that call fast.
                self._retry_now = anyio.Event()
                self._set("error", error=f"{exc}; trying again in {delay:g} s")
                assert self._stop is not None
                with anyio.move_on_after(delay):
                    async with anyio.create_task_group() as waiting:
                        for event in (self._stop, self._retry_now):
                            waiting.start_soon(_set_then_cancel, event, waiting.cancel_scope)
                self._retry_now = None
                continue
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
            if len(crashes) > MAX_RESTARTS and not self.config.is_remote:
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
            try:
                transport = self.transport_factory(self.config, log, name=self.name, oauth=self.oauth)
            except ValueError as exc:  # a header's variable is gone from the environment
                raise _StartFailed(f"MCP server {self.name!r} cannot connect: {exc}") from None
            except SandboxUnavailable as exc:  # it asked for a sandbox none can give: it does not run
                raise _StartFailed(f"MCP server {self.name!r} was not started: {exc}") from None
            started = False
            start_error: str | None = None
            hung: str | None = None
            # The start deadline is a scope around the client's whole life, lifted once started:
            # the client's task groups must nest inside it (a `fail_after` around `__aenter__`
            # alone would be exited while they are still open).
            deadline = anyio.current_time() + self.config.start_timeout
            try:
                with anyio.CancelScope(deadline=deadline) as start_scope:
                    stale = anyio.Event()
                    async with (
                        Client(
                            transport,
                            cache=None,
                            client_info=CLIENT_INFO,
                            list_roots_callback=self._list_roots,
                            elicitation_callback=self.elicitation_callback,
                            sampling_callback=self.sampling_callback,
                            message_handler=partial(on_message, stale),
                            extensions=[TasksExtension()],  # tools served as tasks in the 2026-07-28 era
                        ) as client,
                        anyio.create_task_group() as tg,
                    ):
                        conn = Connection(client=client, transport=transport, tools={}, tools_stale=stale)
                        # Listening before listing: no change can fall between the two.
                        await listen_for_changes(conn, tg, server=self.name)
                        listed = await list_tools(client, self.name, task_modes=conn.task_modes)
                        tools = conn.tools = await self._vetted(listed)
                        start_scope.deadline = math.inf
                        if isinstance(transport, RemoteTransport):
                            transport.connected = True
                        started = True
                        self.needs_sign_in = False
                        self.unreachable = None
                        self._conn = conn
                        self.tools, self.pid = tools, transport.pid
                        self._set("ready")
                        where = f"pid {self.pid}" if self.pid else display_url(self.config.url or "")
                        logger.info("MCP server %r ready (%s, %d tools)", self.name, where, len(tools))
                        tg.start_soon(
                            partial(
                                follow_changes,
                                conn,
                                server=self.name,
                                timeout=self.config.start_timeout,
                                adopt=partial(self._adopt_tools, conn),
                                vet=self._vetted,
                            )
                        )
                        await transport.lost.wait()
                        tg.cancel_scope.cancel()
                        # Say so before the (bounded, but not instant) teardown below.
                        self._conn, self.pid = None, None
                        hung = conn.hung
                        if not self._stopping:
                            self._set("starting", error=f"{self._loss_cause(conn)}; {self._again}")
                if not started:
                    start_error = f"did not start within {self.config.start_timeout:g} s"
            # Anything that stops a start is a start error (the client may wrap it in a group).
            except Exception as exc:
                if started and not (self.config.is_remote and transport.lost.is_set()):
                    raise
                if started:
                    # A dropped remote connection may fail its own teardown (a stream already closed).
                    logger.debug("MCP server %r: connection ended with %r", self.name, exc)
                else:
                    logger.debug("MCP server %r failed to start", self.name, exc_info=exc)
                    start_error = transport.start_failure(exc)
            # The client is closed: the process is stopped and its exit code known.
            if isinstance(transport, RemoteTransport):
                self.last_http_error = transport.last_http_error or self.last_http_error
            if start_error is not None:
                self.needs_sign_in = isinstance(transport, RemoteTransport) and transport.sign_in_needed is not None
                self.unreachable = transport.unreachable if isinstance(transport, RemoteTransport) else None
                if transport.returncode is not None and transport.lost.is_set():
                    start_error += f" (exit code {transport.returncode})"
                # A remote server's log holds only what this start already says.
                tail = "" if self.config.is_remote else log_tail(self.log_path, log_start)
                raise _StartFailed(f"MCP server {self.name!r} {start_error}{tail}")
            if self._stopping:
                return False
            if isinstance(transport, RemoteTransport):
                cause = transport.cause or "the connection was lost"
            else:
                cause = hung or f"crashed (exit code {transport.returncode})"
            log.write(f"--- {datetime.now().isoformat(timespec='seconds')} {cause}; {self._again}\n".encode())
        logger.warning("MCP server %r %s; %s", self.name, cause, self._again)
        self.last_restart = cause
        self._set("starting", error=f"{cause}; {self._again}")
        return True

    async def _vetted(self, tools: dict[str, ToolInfo]) -> dict[str, ToolInfo]:
        """The listing as the pins see it (changed tools marked), or as listed without a vet."""
        return tools if self.vet is None else await self.vet(tools)

    def _adopt_tools(self, conn: Connection, tools: dict[str, ToolInfo]) -> bool:
        """Take a changed tool list, if `conn` is still this server's connection."""
        if conn is not self._conn:
            return False
        conn.tools = self.tools = tools
        logger.info("MCP server %r changed its tools (%d now)", self.name, len(tools))
        if self.on_tools_changed is not None:
            self.on_tools_changed(self.name)
        return True

    async def _list_roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        """Answer the server's `roots/list` (see backend/mcp/roots.py for which workspaces)."""
        roots = self.roots.for_request()
        conn = self._conn
        if conn is not None and conn.client.session is context.session:
            conn.roots_given = roots
        return roots_result(roots)

async def _set_then_cancel(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


class _StartFailed(Exception):
    """The server could not be started; the message says why."""
