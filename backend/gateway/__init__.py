"""Overseer as an MCP server: MCP clients (Claude Desktop, Claude Code) invoke agents and gated tools.

One MCPServer (`server.py`) over the local Host, served on two transports: stdio for
`overseer mcp` (`stdio.py`, or `bridge.py` to a running host's `/mcp`) and streamable HTTP at
`/mcp` on `overseer serve` (`http.py`). Approvals inside an invoked agent are also put to the
client as elicitations (`elicitation.py`); the first answer wins, from the client or the
dashboard.
"""

from backend.gateway.server import Gateway, build_server

__all__ = ["Gateway", "build_server"]
