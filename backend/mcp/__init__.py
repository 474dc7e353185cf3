"""MCP client side: server configuration, the shared process pool, the tool catalog and calls."""

from backend.mcp.config import McpServerConfig, builtin_servers, parse_mcp_servers
from backend.mcp.errors import McpPoolError, ToolNotFound
from backend.mcp.pool import SESSION_META_KEY, WORKSPACE_META_KEY, McpPool
from backend.mcp.server import ServerState, ServerStatus

__all__ = [
    "McpPool",
    "McpPoolError",
    "McpServerConfig",
    "SESSION_META_KEY",
    "ServerState",
    "ServerStatus",
    "ToolNotFound",
    "WORKSPACE_META_KEY",
    "builtin_servers",
    "parse_mcp_servers",
]
