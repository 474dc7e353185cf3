"""McpPool: one shared stdio process per configured MCP server, multiplexing every session's calls.

A session must not cost a process tree: each server is started once, in the background and in
parallel, and every session's calls go over its one connection, with the session's workspace and
id in the request's `_meta`.

See docs/architecture.md (the map).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast

import anyio
import anyio.abc
import anyio.to_thread
from mcp_types import RequestParamsMeta

from backend.domain.tools import ToolInfo, ToolResult, split_tool_name
from backend.mcp.config import McpServerConfig, brings_outside_text, check_server_name
from backend.mcp.connection import TransportFactory
from backend.mcp.elicitation import CallInFlight, ElicitationRouter
from backend.mcp.errors import McpPoolError, ToolNotFound
from backend.mcp.oauth_store import OAuthVault
from backend.mcp.remote import open_transport
from backend.mcp.results import DEFAULT_SPILL_LIMIT, cap_result, to_tool_result
from backend.mcp.server import HANG_AFTER, ServerRunner, ServerState, ServerStatus
from backend.mcp.server_calls import ProgressCallback
from backend.mcp.tasks import TaskStarted
from backend.mcp.tool_pins import ToolPins, UnknownChange
from backend.mcp.transport import EXIT_GRACE, KILL_GRACE
from backend.paths import private_dir

__all__ = [
    "SANDBOX_META_KEY",
    "SESSION_META_KEY",
    "WORKSPACE_META_KEY",
    "McpPool",
    "ProgressCallback",
    "ServerState",
    "ServerStatus",
]

logger = logging.getLogger(__name__)

WORKSPACE_META_KEY = "overseer/workspace"
SESSION_META_KEY = "overseer/session_id"
SANDBOX_META_KEY = "overseer/sandbox"

# Every server stops in parallel and each stop is bounded (flush, stdin close, TERM, KILL).
_STOP_TIMEOUT = 1 + EXIT_GRACE + 2 * KILL_GRACE + 2


class McpPool:
    """Starts the configured servers, keeps them running, and routes `mcp__<server>__<tool>` calls.

    Use `async with McpPool(...) as pool:` or `start()` / `aclose()`; the two may run in
    different tasks (an app's startup and shutdown hooks).
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        log_dir: Path,
        spill_limit: int = DEFAULT_SPILL_LIMIT,
        hang_after: int = HANG_AFTER,
        on_tools_changed: Callable[[str], None] | None = None,
        oauth_dir: Path | None = None,
        transport_factory: TransportFactory = open_transport,
    ) -> None:
        """`oauth_dir`: where remote servers' sign-ins are kept (default: `oauth` next to `log_dir`,
        i.e. in the data dir, where `overseer mcp login` writes them). `hang_after`: calls in a row that time out before their server is deemed hung and restarted.
        `on_tools_changed(server)`: called when a running server's tools changed (the catalog,
        `tools()`, already has them, so the next turn offers them). `transport_factory`: each start's
        transport (default `open_transport`; the test harness runs built-in servers in memory)."""
        for name in servers:
            try:
                check_server_name(name)
            except ValueError as exc:
                raise McpPoolError(str(exc)) from None
        self._log_dir = log_dir
        self._spill_limit = spill_limit
        self._hang_after = hang_after
        self._on_tools_changed = on_tools_changed
        self._transport_factory = transport_factory
        self._watchers: list[Callable[[str], None]] = []
        self.oauth = OAuthVault(oauth_dir or log_dir.parent / "oauth")
        """Remote servers' OAuth sign-ins (tokens, registrations), encrypted at rest."""
        self.elicitations = ElicitationRouter()
        """Places servers' questions in the calling session; the host attaches who answers them."""
        self.pins: ToolPins | None = None
        """Checks every listing against the tools' pins (issue 34); the host attaches it, before
        the pool starts. Without it, tools are taken as listed."""
        self._runners = {name: self._new_runner(name, config) for name, config in servers.items()}
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # Servers added at run time join the supervisor's task group (see add_server).
        self._group: anyio.abc.TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._finished: dict[ServerRunner, anyio.Event] = {}

    def _new_runner(self, name: str, config: McpServerConfig) -> ServerRunner:
        """A supervisor for one server, wired to this pool (questions, tool changes, watchers)."""
        runner = ServerRunner(
            name,
            config,
            log_path=self._log_dir / f"{name}.log",
            hang_after=self._hang_after,
            on_tools_changed=self._tools_changed,
            elicitation_callback=self.elicitations.callback_for(name),
            sampling_callback=self.elicitations.sampling_callback_for(name),
            oauth=self.oauth,
            transport_factory=self._transport_factory,
            vet=partial(self._vet, name, config),
        )
        runner.on_state_changed = self._notify
        return runner

    async def start(self) -> None:
        """Launch every enabled server in the background and return at once.

        Servers go "starting" -> "ready" or "error"; calls made meanwhile wait for their server.
        """
        if self._task is not None:
            raise McpPoolError("the MCP pool has already been started")
        private_dir(self._log_dir)
        self._closing = anyio.Event()
        for runner in self._runners.values():
            runner.prepare()
        # A plain asyncio task, not a task group of the caller's: start() must return while
        # the servers run on, and aclose() may be called from another task.
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name="mcp-pool")

    async def _supervise(self) -> None:
        async with anyio.create_task_group() as tg:
            self._group = tg
            for runner in list(self._runners.values()):
                self._launch(runner)
            # Open until aclose(), so servers added later have a group to run in.
            assert self._closing is not None
            tg.start_soon(self._closing.wait, name="mcp-pool-open")
        self._group = None

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until every enabled server is ready or has failed.

        Bounded by `timeout`, by default the longest start timeout (plus a second); raises
        TimeoutError when a server is still starting then.
        """
        if self._task is None:
            raise McpPoolError("the MCP pool has not been started")
        if timeout is None:
            timeout = max((r.config.start_timeout for r in self._runners.values()), default=0) + 1
        with anyio.fail_after(timeout):
            for runner in self._runners.values():
                await runner.wait_settled()

    async def aclose(self) -> None:
        """Stop every server (close stdin, wait, then kill); shielded and bounded."""
        if self._task is None or self._closed:
            return
        self._closed = True
        task = self._task
        with anyio.CancelScope(shield=True):
            for runner in self._runners.values():
                runner.request_stop()
            if self._closing is not None:
                self._closing.set()
            # asyncio.wait, unlike awaiting the task, does not cancel it when the wait ends.
            done, _ = await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
            if not done:
                logger.warning("MCP servers did not stop within %.0f s; cancelling", _STOP_TIMEOUT)
                task.cancel()
                await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
        if task.done() and not task.cancelled() and task.exception() is not None:
            logger.error("the MCP pool's supervisor failed", exc_info=task.exception())

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def statuses(self) -> list[ServerStatus]:
        """Every configured server's state, in configuration order."""
        return [runner.status() for runner in self._runners.values()]

    def tools(self) -> list[ToolInfo]:
        """The catalog: every tool of every ready (or restarting) server, named `mcp__<server>__<tool>`."""
        runners = [runner for runner in self._runners.values() if runner.offers_tools()]
        return [tool for runner in runners for tool in runner.tools.values()]

    def tool(self, name: str) -> ToolInfo | None:
        """The catalog entry for a full tool name, or None if no ready (or restarting) server offers it.

        A server restarting after a crash keeps its tools: a call to one waits for the restart.
        """
        parts = split_tool_name(name)
        runner = self._runners.get(parts[0]) if parts else None
        if parts is None or runner is None or not runner.offers_tools():
            return None
        return runner.tools.get(parts[1])

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        workspace: Path,
        session_id: str,
        timeout: float | None = None,
        call_id: str | None = None,
        redact: Callable[[ToolResult], ToolResult] | None = None,
        on_progress: ProgressCallback | None = None,
        sandbox: Mapping[str, Any] | None = None,
        on_task: TaskStarted | None = None,
        resume_task: str | None = None,
    ) -> ToolResult:
        """Run the tool `mcp__<server>__<tool>` for a session and return its (capped) result.

        Failures the model should read (the tool failed, timed out, its server crashed, hung or
        is down) are `is_error` results; a call to a restarting server waits for it first. An
        unknown tool raises `ToolNotFound`; a call before `start()` raises `McpPoolError`.
        `call_id` names the spill file of a cut result; `redact` rewrites the result first, so
        a spill file never holds what it removed. Every call carries a progressToken; the
        server's `notifications/progress` for it go to `on_progress(progress, total, message)`.
        `sandbox`: how a command of this call is confined (`_meta["overseer/sandbox"]`, for the shell server).
        A tool that must run as a task (backend/mcp/tasks.py) tells `on_task` its task id, to keep
        with the call; after a restart, `resume_task` (that id) fetches the task's result instead of
        calling the tool again.
        """
        if self._task is None:
            raise McpPoolError("the MCP pool has not been started")
        parts = split_tool_name(name)
        if parts is None:
            raise ToolNotFound(name, "not an MCP tool name")
        server, tool = parts
        runner = self._runners.get(server)
        if runner is None:
            raise ToolNotFound(name, f"no MCP server named {server!r}")
        if runner.config.disabled:
            raise ToolNotFound(name, f"MCP server {server!r} is disabled")
        # An open TypedDict (extra keys allowed at run time) that type checkers cannot yet express.
        meta = cast(RequestParamsMeta, {WORKSPACE_META_KEY: str(workspace), SESSION_META_KEY: session_id})
        if sandbox is not None:
            meta[SANDBOX_META_KEY] = dict(sandbox)  # type: ignore[literal-required]
        with self.elicitations.calling(CallInFlight(server=server, tool=name, session_id=session_id, call_id=call_id)):
            raw = await runner.call(
                tool, arguments, workspace=workspace, meta=meta, timeout=timeout, full_name=name, on_progress=on_progress,
                on_task=on_task, resume=resume_task,
            )
        result = raw if isinstance(raw, ToolResult) else to_tool_result(raw)
        if redact is not None:
            result = redact(result)
        if len(result.text.encode()) > self._spill_limit:
            # Writing megabytes is blocking I/O: keep it off the event loop.
            result = await anyio.to_thread.run_sync(
                partial(
                    cap_result,
                    result,
                    workspace=workspace,
                    call_id=call_id or uuid.uuid4().hex,
                    limit=self._spill_limit,
                )
            )
        if brings_outside_text(server, runner.config, tool):  # issue 34: tagged, and marked as data for the model
            url = arguments.get("url")
            result = result.model_copy(update={"outside_text": url if isinstance(url, str) and url else name})
        return result

    # Changing the servers while the pool runs (the dashboard's Servers page), and watching them.

    def watch(self, watcher: Callable[[str], None]) -> Callable[[], None]:
        """Call `watcher(server)` whenever a server changes state or tools, is added or is removed.

        It is called in the event loop and must not block. Returns a function that stops the calls.
        """
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def config_of(self, name: str) -> McpServerConfig | None:
        """The configuration a server in the pool runs with, or None if there is no such server."""
        runner = self._runners.get(name)
        return None if runner is None else runner.config

    def log_path(self, name: str) -> Path:
        """Where a server of this name writes its stderr (whether or not it is in the pool now)."""
        return self._log_dir / f"{name}.log"

    async def add_server(self, name: str, config: McpServerConfig) -> None:
        """Start one more server; its tools join the catalog once it is ready.

        Raises McpPoolError for a bad or taken name, or once the pool is closed.
        """
        if self._closed:
            raise McpPoolError("the MCP pool is closed")
        try:
            check_server_name(name)
        except ValueError as exc:
            raise McpPoolError(str(exc)) from None
        if name in self._runners:
            raise McpPoolError(f"the MCP pool already has a server named {name!r}")
        runner = self._new_runner(name, config)
        self._runners[name] = runner
        if self._task is not None:
            runner.prepare()
            self._launch(runner)
        self._notify(name)

    async def remove_server(self, name: str) -> None:
        """Stop a server and forget it: calls in flight fail saying it was stopped, later ones find
        no such server. Bounded like aclose(); raises McpPoolError for an unknown name."""
        runner = self._runners.pop(name, None)
        if runner is None:
            raise McpPoolError(f"the MCP pool has no server named {name!r}")
        await self._stop(runner)
        self._notify(name)

    async def restart_server(
        self, name: str, config: McpServerConfig | None = None, *, reason: str = "restarted on request"
    ) -> None:
        """Stop a server and start it again, with `config` if given (an edit), else as it was.

        From the moment this is called, new calls wait for the new process (bounded by its start
        timeout); calls in flight on the old one fail saying it was stopped. A plain restart counts
        as one (`restarts`, `last_restart` = `reason`); a new config starts the count afresh.
        """
        old = self._runners.get(name)
        if old is None:
            raise McpPoolError(f"the MCP pool has no server named {name!r}")
        if self._closed:
            raise McpPoolError("the MCP pool is closed")
        new = self._new_runner(name, config or old.config)
        if config is None:
            new.restarts, new.last_restart = old.restarts + 1, reason
        if self._task is not None:
            new.prepare()  # "starting" at once: calls from now on wait for it, not the old process
        self._runners[name] = new  # the same key keeps the server's place in the order
        await self._stop(old)
        if self._task is not None and self._runners.get(name) is new:
            self._launch(new)
        self._notify(name)

    def _launch(self, runner: ServerRunner) -> None:
        """Run an enabled server in the supervisor's group (once the group exists; until then,
        _supervise launches what is in the pool when it begins)."""
        if self._group is None or runner.config.disabled or runner in self._finished:
            return
        finished = self._finished[runner] = anyio.Event()

        async def run() -> None:
            try:
                await runner.run()
            finally:
                finished.set()
                self._finished.pop(runner, None)

        self._group.start_soon(run, name=f"mcp-server:{runner.name}")

    async def _stop(self, runner: ServerRunner) -> None:
        """Stop one runner and wait (shielded, bounded) until its process is gone."""
        runner.request_stop()
        finished = self._finished.get(runner)
        if finished is None:
            return  # never launched
        with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_TIMEOUT) as scope:
            await finished.wait()
        if scope.cancelled_caught:
            logger.warning("MCP server %r did not stop within %.0f s", runner.name, _STOP_TIMEOUT)

    async def accept_tool(self, server: str, tool: str, *, by: str) -> ToolInfo:
        """Make a changed tool's definition as listed now its pin (an admin's word, `by`); its
        calls are then decided by the rules again. UnknownChange when it is not changed now."""
        runner = self._runners.get(server)
        info = runner.tools.get(tool) if runner is not None else None
        if runner is None or info is None or info.changed is None or self.pins is None:
            raise UnknownChange(f"MCP server {server!r} has no changed tool {tool!r}")
        await self.pins.accept(server, runner.config, info, by=by)
        accepted = runner.tools[tool] = info.model_copy(update={"changed": None})
        self._notify(server)
        return accepted

    async def _vet(self, name: str, config: McpServerConfig, tools: dict[str, ToolInfo]) -> dict[str, ToolInfo]:
        return tools if self.pins is None else await self.pins.vet(name, config, tools)

    def _tools_changed(self, name: str) -> None:
        if self._on_tools_changed is not None:
            self._on_tools_changed(name)
        self._notify(name)

    def _notify(self, name: str) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(name)
            except Exception:  # one broken watcher must not stop a server's supervision
                logger.exception("a watcher of MCP server %r failed", name)
