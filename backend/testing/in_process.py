"""Overseer's own tool servers in memory, for tests whose subject is not the server's process.

A stdio server costs a Python interpreter and the MCP SDK's imports (one to two seconds of CPU)
at every start. `in_process_transport` is a pool `transport_factory` that builds the same server
object `python -m mcp_servers.<name> ...` would, from the same arguments and the environment the
host would give the process, and connects it through the SDK's in-memory streams: the pool, its
client and its supervision run unchanged above the transport. Servers that need a process of
their own (see `IN_PROCESS_SERVERS`), remote servers and anyone else's commands are opened as
usual, by `open_transport`. Tests of the process itself (crash, restart, kill, stdio framing,
sandboxed launch) build their pools without this factory.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import IO, Any

import anyio
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.server.mcpserver import MCPServer
from mcp.shared.memory import create_client_server_memory_streams

from backend.mcp.config import McpServerConfig
from backend.mcp.connection import ServerTransport
from backend.mcp.oauth_store import OAuthVault
from backend.mcp.remote import RemoteTransport, open_transport
from backend.mcp.transport import StdioProcessTransport

logger = logging.getLogger(__name__)

IN_PROCESS_SERVERS = frozenset({"file", "shell", "memory", "cron", "invoke_agent"})
"""Built-in servers whose behaviour does not depend on being a process of their own.

The shell server's commands get the environment its process would have (it is handed on), run
in the sandbox the host sends with each call, and are killed with their process group on a
timeout or a cancelled call; only their reaper (mcp_servers/shell/reaper.py) then watches the
test process instead of a server process. Not the browser server: Chromium and Playwright's
threads belong in a process of their own.
"""
_SHUTDOWN_GRACE = 2.0
"""Seconds the server gets to finish once its input ends, as a stdio server gets after stdin closes."""


def in_process_transport(
    config: McpServerConfig, log: IO[bytes], *, name: str = "", oauth: OAuthVault | None = None
) -> StdioProcessTransport | RemoteTransport | ServerTransport:
    """A pool `transport_factory`: built-in servers in `IN_PROCESS_SERVERS` in memory, the rest as usual."""
    module = _builtin_module(config)
    if module is None or module.rsplit(".", 1)[-1] not in IN_PROCESS_SERVERS:
        return open_transport(config, log, name=name, oauth=oauth)
    args = config.args[2:]  # after `-m <module>`
    log.write(f"--- in memory: {module} {' '.join(args)}\n".encode())
    # The module named in the config, loaded as `python -m` would (its `__main__` only builds
    # the command; `if __name__ == "__main__"` keeps it from serving stdio). A dynamic import:
    # production code never imports the tool servers (the host-apart-from-tool-servers contract).
    command = importlib.import_module(f"{module}.__main__").COMMAND
    # The environment the host would launch the process with (StdioProcessTransport's).
    server = command.build(args, environ=get_default_environment() | config.process_env())
    return InProcessTransport(server)


def _builtin_module(config: McpServerConfig) -> str | None:
    """`mcp_servers.<name>` for a config that runs one with this interpreter, else None."""
    if config.is_remote or config.sandbox is not None or config.command != sys.executable:
        return None
    if len(config.args) < 2 or config.args[0] != "-m" or not config.args[1].startswith("mcp_servers."):
        return None
    return config.args[1]


class InProcessTransport:
    """One start of an in-memory server: `lost` is set when the server stops serving.

    `kill()` (the pool's answer to a hung server) cancels the server's task, as SIGKILL ends a
    process: its pending calls fail and the pool starts a new server, as after a crash.
    """

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.pid: int | None = None
        self.returncode: int | None = None
        self.lost = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._cm: AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        if self._cm is not None:
            raise RuntimeError("an InProcessTransport can be entered only once")
        self._cm = self._run()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(exc_type, exc, tb)

    def kill(self) -> None:
        """End the server now, for one that stopped answering."""
        if self._scope is not None:
            self._scope.cancel()

    def start_failure(self, exc: Exception) -> str:
        """Why the server did not start."""
        return f"failed to start: {exc!r}"

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[TransportStreams]:
        # The SDK's in-memory transport (mcp.client._memory) with two additions the pool needs:
        # `lost`, and a cancellable server task for `kill()`.
        lowlevel: Any = self.server._lowlevel_server  # noqa: SLF001 - as the SDK's own InMemoryTransport does
        async with create_client_server_memory_streams() as (client_streams, server_streams):
            client_read, client_write = client_streams
            server_read, server_write = server_streams
            done = anyio.Event()

            async def serve() -> None:
                try:
                    with anyio.CancelScope() as self._scope:
                        await lowlevel.run(server_read, server_write, lowlevel.create_initialization_options())
                except Exception:
                    logger.exception("in-memory MCP server %r failed", self.server.name)
                finally:
                    self.lost.set()
                    # The client's reads end, as stdout's EOF ends them for a process.
                    await server_write.aclose()
                    done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                try:
                    yield client_read, client_write
                finally:
                    with anyio.CancelScope(shield=True):
                        await client_write.aclose()
                        with anyio.move_on_after(_SHUTDOWN_GRACE):
                            await done.wait()
                    tg.cancel_scope.cancel()
