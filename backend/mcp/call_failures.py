"""What the model reads when a tool call fails on its server's side: the text says what happened
to the server and whether the call may have taken effect, so the model knows whether to retry."""

from __future__ import annotations

from backend.domain.tools import ToolResult
from backend.mcp.remote import CallAttempt, RemoteTransport
from backend.mcp.transport import StdioProcessTransport


def hung_notice(server: str, hung: str) -> str:
    """The start of every message about a server deemed hung (`hung` says why)."""
    return f"MCP server '{server}' {hung}, so it was killed and is being restarted"


def not_taken(server: str, tool: str, attempt: CallAttempt) -> ToolResult:
    """A call the server did not take even on a new connection: it did not run."""
    why = attempt.unreachable or ("it refused the call, HTTP 401" if attempt.refused else "its MCP session expired")
    return ToolResult.error(
        f"MCP server '{server}' did not take '{tool}' ({why}), even after reconnecting; the call did not run."
    )


def failed_call(
    server: str, tool: str, exc: Exception, *, transport: StdioProcessTransport | RemoteTransport, hung: str | None
) -> ToolResult:
    """A call that failed with `exc` (a protocol error, or the connection gone under it)."""
    if isinstance(transport, RemoteTransport) and transport.lost.is_set():
        return ToolResult.error(
            f"MCP server '{server}' lost the connection while running '{tool}' ({transport.cause}); "
            "it is reconnecting, so the tool can be called again. Whether this call took effect is unknown."
        )
    if hung is not None:
        return ToolResult.error(
            f"{hung_notice(server, hung)}; '{tool}' was abandoned and whether it took effect "
            "is unknown. The tool can be called again once the server is back."
        )
    if transport.lost.is_set():
        return ToolResult.error(
            f"MCP server '{server}' crashed while running '{tool}'; it is being restarted "
            "(unless it keeps crashing), so the tool can be called again. "
            "Whether this call took effect is unknown."
        )
    # A protocol-level refusal (bad request, invalid result): the model may fix its call.
    return ToolResult.error(f"MCP server '{server}' failed to run '{tool}': {exc}")
