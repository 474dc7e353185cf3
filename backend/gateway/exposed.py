"""`--expose-tools`: the host's MCP tools, re-exported to the client through the gate.

The calls themselves are the app's DirectTools (backend/app/direct_tools.py): gated, audited and
recorded in one session per caller and client. Here is only what MCP adds: the tools as the
client lists them, the result as it reads it, and progress notifications that only grow.

A tool whose description or parameter descriptions read like instructions to a model
(`backend/domain/description_scan.py`, issue 34) is withheld: not listed, and a call to it by
name is refused. Re-exporting it, even with a neutral description, would put a server's orders
in front of the client's model under Overseer's banner, or offer a tool the client cannot know;
the Servers page shows the flag and its reason, and the host's own sessions still gate it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

import mcp_types as wire

from backend.app.direct_tools import DirectTools
from backend.auth import Principal
from backend.domain.description_scan import scan_tool
from backend.domain.tools import ToolInfo, ToolResult


class Reporter(Protocol):
    """Sends the calling client a progress notification (the MCP `progressToken` it gave)."""

    def __call__(self, progress: float, message: str, total: float | None = None) -> Awaitable[None]: ...


def tool_listing(info: ToolInfo) -> wire.Tool:
    """A pool tool as the client sees it: its full name, schema and hints."""
    hints = info.annotations.model_dump(exclude_none=True)
    return wire.Tool(
        name=info.name,
        title=hints.pop("title", None),
        description=f"[Overseer, gated by its approval policy] {info.description}",
        input_schema=info.input_schema,
        annotations=wire.ToolAnnotations(
            read_only_hint=hints.get("readOnlyHint"),
            destructive_hint=hints.get("destructiveHint"),
            idempotent_hint=hints.get("idempotentHint"),
            open_world_hint=hints.get("openWorldHint"),
        ),
    )


def call_result(result: ToolResult) -> wire.CallToolResult:
    """The gate's result for the client: its text (capped by the host) and images.

    Not the tool's own structured content: that would bypass the host's output cap, and some
    clients show a model only the structured part.
    """
    content: list[wire.ContentBlock] = [wire.TextContent(type="text", text=result.text)]
    for image in result.images:
        content.append(wire.ImageContent(type="image", data=image["data"], mime_type=image["mime_type"]))
    return wire.CallToolResult(content=content, is_error=result.is_error)


def withheld(info: ToolInfo) -> list[str]:
    """Why a tool is not re-exported (its flags, in words), or nothing when it is."""
    return [f"{flag.where} {flag.reason}" for flag in scan_tool(info.description, info.input_schema)]


class ExposedTools:
    """The app's direct tool calls as MCP tools: listed, called, and reported on."""

    def __init__(self, direct: DirectTools) -> None:
        self.direct = direct

    async def listing(self) -> list[wire.Tool]:
        """The pool's tools but the flagged ones (see the module's docstring)."""
        return [tool_listing(t) for t in await self.direct.tools() if not withheld(t)]

    async def knows(self, name: str) -> bool:
        """Whether `name` is a pool tool; a call may come before the pool's servers are up."""
        return await self.direct.knows(name)

    async def call(
        self, name: str, arguments: dict[str, Any], *, caller: Principal, client: str, report: Reporter
    ) -> wire.CallToolResult:
        """Run the call through the gate; `report` hears where it stands (which approval it waits
        for, then the tool's own progress)."""
        info = next((t for t in await self.direct.tools() if t.name == name), None)
        reasons = withheld(info) if info is not None else []
        if reasons:
            text = f"Overseer does not offer {name} here: its description is flagged ({'; '.join(reasons)})."
            return wire.CallToolResult(content=[wire.TextContent(type="text", text=text)], is_error=True)
        last = -1.0

        async def tell(progress: float, message: str, total: float | None = None) -> None:
            nonlocal last
            if progress <= last:  # the spec asks each notification's progress to grow
                return
            last = progress
            await report(progress, message, total)

        result = await self.direct.call(name, arguments, caller=caller, client=client, progress=tell)
        return call_result(result)
