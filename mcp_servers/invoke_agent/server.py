"""The invoke_agent server: one tool that runs a child agent through the host's invoke API.

The child is a full session on the host: linked to its parent, governed by the same policies,
and its approvals reach the dashboard like any other. This server only asks and waits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from mcp_servers._shared.host_client import HostClient
from mcp_servers._shared.workspace import SESSION_META_KEY

DESCRIPTION = "Overseer invoke_agent tool server: delegate a task to a child agent on the Overseer host"

INSTRUCTIONS = (
    "invoke_agent hands a self-contained task to a child agent and returns its final answer. "
    "The child starts with no memory of this conversation unless fork_session is true."
)

INVOKE_TIMEOUT_SECONDS = 24 * 3600.0
"""A child run is bounded by its own limits (iterations, approval timeouts), not by this call."""

# The child may do anything its own policies allow; its tool calls are gated one by one there.
RUNS_AN_AGENT = ToolAnnotations(
    title="Invoke agent", readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True
)


def create_server(
    root: Path, *, trust_meta: bool, host_url: str | None = None, token: str | None = None
) -> MCPServer:
    """Build the server. `root` is unused (the child's workspace is the parent's, on the host).

    With `trust_meta` (the host launched us) the calling session's id from `_meta` becomes the
    child's parent: it is nested under it, its depth is checked, and `fork_session` can copy it.
    """
    del root
    host = HostClient(host_url, token, server="invoke_agent")
    server = MCPServer("invoke_agent", instructions=INSTRUCTIONS)

    @server.tool(name="invoke_agent", annotations=RUNS_AN_AGENT)
    async def invoke_agent(
        prompt: Annotated[str, Field(min_length=1, description="the whole task, self-contained")],
        ctx: Context,
        mode: Annotated[str | None, Field(description="the child's mode, e.g. agent, ask, plan")] = None,
        model: Annotated[str | None, Field(description="the child's model; default: the parent's")] = None,
        agent: Annotated[
            str | None,
            Field(description="a named agent to hand the task to; it works in its own workspace under its own rules"),
        ] = None,
        fork_session: Annotated[
            bool, Field(description="start the child from a copy of this conversation")
        ] = False,
    ) -> CallToolResult:
        """Run a child agent to its end and return its final answer.

        Structured content carries the child's session id, status, cost and tokens. A child
        that fails or is stopped is an error result with its reason.
        """
        parent = _parent_session(ctx.request_context.meta) if trust_meta else None
        if fork_session and parent is None:
            raise ToolError("fork_session needs a parent session: it only works inside Overseer")
        body: dict[str, Any] = {"prompt": prompt, "fork": fork_session}
        if mode:
            body["mode"] = mode
        if model:
            body["model"] = model
        if agent:
            body["agent"] = agent
        if parent is not None:
            body["parent_session_id"] = parent
        result = await host.request("POST", "/api/agents/invoke", json=body, timeout=INVOKE_TIMEOUT_SECONDS)
        status = str(result.get("status", ""))
        response = str(result.get("response", ""))
        if status == "completed":
            text = response or "(the child agent finished without a text answer)"
        else:
            text = f"The child agent ended {status or 'unexpectedly'}: {response or 'no reason given'}"
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content={
                "session_id": result.get("session_id"),
                "status": status,
                "cost_usd": result.get("cost_usd", 0.0),
                "tokens": result.get("tokens", {}),
            },
            is_error=status != "completed",
        )

    return server


def _parent_session(meta: Any) -> str | None:
    value = meta.get(SESSION_META_KEY) if meta else None
    return value if isinstance(value, str) and value else None
