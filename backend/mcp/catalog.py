"""The tool catalog: a server's tools/list turned into `ToolInfo` entries under their full names."""

from __future__ import annotations

import mcp_types
from mcp import Client

from backend.domain.tools import ToolAnnotations, ToolInfo, full_tool_name
from backend.mcp.tasks import TaskSupport, task_support

_MAX_TOOL_PAGES = 100


async def list_tools(
    client: Client, server: str, *, task_modes: dict[str, TaskSupport] | None = None
) -> dict[str, ToolInfo]:
    """Every tool the server offers, keyed by its name on the server, following pagination.

    `task_modes`, when given, is refilled with the tools that may or must be called as tasks."""
    tools: dict[str, ToolInfo] = {}
    modes: dict[str, TaskSupport] = {}
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):  # a paginator that never ends must not hang a start
        page = await client.list_tools(cursor=cursor)
        tools.update((tool.name, tool_info(server, tool)) for tool in page.tools)
        modes.update((tool.name, mode) for tool in page.tools if (mode := task_support(tool)) != "forbidden")
        cursor = page.next_cursor
        if not cursor:
            break
    if task_modes is not None:
        task_modes.clear()
        task_modes.update(modes)
    return tools


def tool_info(server: str, tool: mcp_types.Tool) -> ToolInfo:
    """One catalog entry, named `mcp__<server>__<tool>`, with the server's annotations kept."""
    hints = tool.annotations or mcp_types.ToolAnnotations()
    return ToolInfo(
        name=full_tool_name(server, tool.name),
        server=server,
        tool=tool.name,
        description=tool.description or "",
        input_schema=tool.input_schema,
        annotations=ToolAnnotations(
            title=hints.title or tool.title,
            readOnlyHint=hints.read_only_hint,
            destructiveHint=hints.destructive_hint,
            idempotentHint=hints.idempotent_hint,
            openWorldHint=hints.open_world_hint,
        ),
    )
