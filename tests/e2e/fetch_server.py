"""A stand-in web-fetch MCP server for the browser tests: a tool whose argument is a URL.

It never touches the network (tests may not): `fetch` only echoes the URL it was given. Run as
`python tests/e2e/fetch_server.py`; it speaks MCP over stdio like any configured server.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("web")


@server.tool(annotations=ToolAnnotations(title="Fetch a web page", readOnlyHint=True, openWorldHint=True))
def fetch(url: str) -> str:
    """Fetch `url` (here: pretend to, and echo it)."""
    return f"fetched {url}"


if __name__ == "__main__":
    server.run()
