"""One live connection to an MCP server: the client, its transport, and what it offered."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from backend.domain.tools import ToolInfo
from backend.mcp.remote import RemoteTransport
from backend.mcp.transport import StdioProcessTransport


@dataclass(kw_only=True)
class Connection:
    """One live server process and what it offered when it started."""

    client: Client
    transport: StdioProcessTransport | RemoteTransport
    tools: dict[str, ToolInfo]
    timeouts: int = 0
    """Calls that timed out since this process last answered one."""
    hung: str | None = None
    """Set, with the reason, when this process was killed for not answering."""
    tools_stale: anyio.Event
    """Set when the server said its tool list changed; replaced once re-listed."""
    roots_given: tuple[Path, ...] | None = None
    """The roots this process was last given (answered or announced); None until it asks."""

    @property
    def handshake_era(self) -> bool:
        """Whether this connection speaks a pre-2026-07-28 protocol, where the client notifies."""
        return self.client.protocol_version not in MODERN_PROTOCOL_VERSIONS
