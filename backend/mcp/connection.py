"""One live connection to an MCP server: the client, its transport, and what it offered."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio
from mcp.client._transport import TransportStreams
from mcp import Client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from backend.domain.tools import ToolInfo
from backend.mcp.remote import RemoteTransport
from backend.mcp.tasks import TaskSupport
from backend.mcp.transport import StdioProcessTransport


class ServerTransport(AbstractAsyncContextManager[TransportStreams], Protocol):
    """What the pool needs of one start's transport, beyond the streams it yields when entered."""

    lost: anyio.Event
    """Set when the server is gone (its process died, the connection dropped)."""
    pid: int | None
    returncode: int | None

    def kill(self) -> None:
        """End a server that stopped answering now; `lost` is set once it is gone."""

    def start_failure(self, exc: Exception) -> str:
        """Why the server did not start, from what ended the start."""


TransportFactory = Callable[..., StdioProcessTransport | RemoteTransport | ServerTransport]
"""`factory(config, log, *, name, oauth)`: the transport of one start of the server `name`.
The pool's default is `open_transport` (a process of its own, or HTTP); the test harness
injects one that runs Overseer's own servers in memory (backend/testing/in_process.py)."""


@dataclass(kw_only=True)
class Connection:
    """One live server process and what it offered when it started."""

    client: Client
    transport: StdioProcessTransport | RemoteTransport | ServerTransport
    tools: dict[str, ToolInfo]
    timeouts: int = 0
    """Calls that timed out since this process last answered one."""
    hung: str | None = None
    """Set, with the reason, when this process was killed for not answering."""
    tools_stale: anyio.Event
    """Set when the server said its tool list changed; replaced once re-listed."""
    roots_given: tuple[Path, ...] | None = None
    task_modes: dict[str, TaskSupport] = field(default_factory=dict)
    """How each tool that is not "forbidden" to run as a task may be (its `execution.taskSupport`)."""
    """The roots this process was last given (answered or announced); None until it asks."""

    @property
    def handshake_era(self) -> bool:
        """Whether this connection speaks a pre-2026-07-28 protocol, where the client notifies."""
        return self.client.protocol_version not in MODERN_PROTOCOL_VERSIONS
