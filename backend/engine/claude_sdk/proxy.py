"""The pooled MCP servers as in-process SDK MCP servers, so the CLI spawns none of its own.

One low-level MCP server per pooled server, listing only the tools the session's mode offers,
under the same names (`mcp__<server>__<tool>` to the model). A call is handed to the engine
with the CLI's tool-use id (the `claudecode/toolUseId` in the request's `_meta`), which the
engine uses to find the gate's decision for it; the tool itself runs on the shared pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from itertools import groupby
from typing import Any

from claude_agent_sdk.types import McpSdkServerConfig
from mcp.server import Server
from mcp_types import CallToolResult, ListToolsResult, Tool

from backend.domain.tools import ToolInfo, ToolResult, full_tool_name
from backend.engine.models.tool_names import ToolNames

TOOL_USE_ID_META = "claudecode/toolUseId"

CallHandler = Callable[[str, str | None, dict[str, Any]], Awaitable[ToolResult]]
"""(full tool name, the CLI's tool-use id if it sent one, arguments) -> the result."""


def proxy_servers(
    tools: Sequence[ToolInfo], on_call: CallHandler, *, names: ToolNames | None = None
) -> dict[str, McpSdkServerConfig]:
    """SDK MCP server configs for `ClaudeAgentOptions.mcp_servers`, one per pooled server.

    A tool whose full name the model's API would refuse (`names`, see
    `backend.engine.models.tool_names`) is listed under the rest of its alias, so the CLI's
    `mcp__<server>__<tool>` is the alias itself."""
    ordered = sorted(tools, key=lambda t: t.server)
    names = names or ToolNames()
    return {
        server: McpSdkServerConfig(type="sdk", name=server, instance=_server(server, list(group), on_call, names))
        for server, group in groupby(ordered, key=lambda t: t.server)
    }


def _listed_name(tool: ToolInfo, names: ToolNames) -> str:
    sent = names.sent_name(tool.name)
    prefix = full_tool_name(tool.server, "")
    return sent[len(prefix) :] if sent != tool.name and sent.startswith(prefix) else tool.tool


def _server(name: str, tools: list[ToolInfo], on_call: CallHandler, names: ToolNames) -> Server:
    listed = ListToolsResult(tools=[_wire_tool(t, _listed_name(t, names)) for t in tools])
    full_names = {_listed_name(t, names): t.name for t in tools}

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return listed

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        full = full_names.get(params.name)
        if full is None:  # the mode does not offer it: the CLI was never shown it either
            return _wire_result(ToolResult.error(f"Unknown tool {params.name!r} on server {name!r}."))
        meta = params.meta or {}
        tool_use_id = meta.get(TOOL_USE_ID_META) if isinstance(meta, dict) else None
        return _wire_result(await on_call(full, tool_use_id, dict(params.arguments or {})))

    return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _wire_tool(tool: ToolInfo, listed_name: str) -> Tool:
    annotations = tool.annotations.model_dump(exclude_none=True)
    return Tool.model_validate(
        {
            "name": listed_name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
            "annotations": annotations or None,
        }
    )


def _wire_result(result: ToolResult) -> CallToolResult:
    content: list[dict[str, Any]] = [{"type": "text", "text": result.text}] if result.text or not result.images else []
    content += [{"type": "image", "data": i["data"], "mimeType": i["mime_type"]} for i in result.images]
    return CallToolResult.model_validate({"content": content, "isError": result.is_error})
