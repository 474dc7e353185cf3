"""MCP client side: server configuration, the shared process pool, the tool catalog and calls."""

from backend.mcp.config import McpServerConfig, builtin_servers, parse_mcp_servers
from backend.mcp.errors import McpPoolError, ToolNotFound
from backend.mcp.pool import SESSION_META_KEY, WORKSPACE_META_KEY, McpPool
from backend.mcp.server import ServerState, ServerStatus

__all__ = [
    "SESSION_META_KEY",
    "WORKSPACE_META_KEY",
    "McpPool",
    "McpPoolError",
    "McpServerConfig",
    "ServerState",
    "ServerStatus",
    "ToolNotFound",
    "builtin_servers",
    "parse_mcp_servers",
]
