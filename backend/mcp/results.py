"""Turning an MCP `CallToolResult` into the host's `ToolResult`, and capping what the model sees.

A tool can return megabytes; the model gets the first `limit` bytes and a note naming a file
in the workspace that holds the whole text, so it can read on in parts if it needs to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import mcp_types

from backend.domain.tools import ToolResult

SPILL_DIR = Path(".overseer") / "spill"
"""Where cut results are written, relative to the session's workspace."""

DEFAULT_SPILL_LIMIT = 50_000


def to_tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    """Text blocks joined by newlines, images collected, structured content kept."""
    texts: list[str] = []
    images: list[dict[str, str]] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            images.append({"data": block.data, "mime_type": block.mime_type})
        elif isinstance(block, mcp_types.AudioContent):
            # Models here take no audio; say it was there rather than drop it silently.
            texts.append(f"[audio content ({block.mime_type}) omitted]")
        elif isinstance(block, mcp_types.ResourceLink):
            texts.append(f"[resource: {block.uri}" + (f" ({block.name})]" if block.name else "]"))
        elif isinstance(block, mcp_types.EmbeddedResource):
            texts.append(_embedded_text(block.resource))
        else:  # a content type newer than this code
            texts.append(f"[{getattr(block, 'type', 'unknown')} content omitted]")
    return ToolResult(
        text="\n".join(texts),
        is_error=result.is_error,
        images=images,
        structured=_as_structured(result.structured_content),
    )


def _embedded_text(resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> str:
    if isinstance(resource, mcp_types.TextResourceContents):
        return resource.text
    return f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'}) omitted]"


def _as_structured(value: Any) -> dict[str, Any] | None:
    # `ToolResult.structured` is an object; 2026-07-28 servers may send any JSON value.
    if value is None or isinstance(value, dict):
        return value
    return {"result": value}


def spill_file_name(call_id: str) -> str:
    """A file name made from a call id, safe whatever characters the id holds."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:100] + ".txt"


def cap_result(
    result: ToolResult, *, workspace: Path, call_id: str, limit: int = DEFAULT_SPILL_LIMIT
) -> ToolResult:
    """Cut text over `limit` UTF-8 bytes, writing the full text to `<workspace>/.overseer/spill/`.

    Blocking file I/O: run it in a worker thread. Structured content larger than the limit is
    dropped from a cut result, since it usually repeats the text and would defeat the cut.
    """
    data = result.text.encode()
    if len(data) <= limit:
        return result
    # Cut on a character boundary: drop a partial UTF-8 sequence at the end.
    head = data[:limit].decode(errors="ignore")
    relative = SPILL_DIR / spill_file_name(call_id)
    try:
        path = workspace / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.text, encoding="utf-8")
    except OSError as exc:
        note = (
            f"[Output cut: showing the first {limit:,} of {len(data):,} bytes. "
            f"The full output could not be saved ({exc.strerror or exc}).]"
        )
        spilled_to = None
    else:
        note = (
            f"[Output cut: showing the first {limit:,} of {len(data):,} bytes. "
            f"The full output is in {relative.as_posix()} (relative to the workspace); "
            f"read that file in parts, from an offset, to see the rest.]"
        )
        spilled_to = relative.as_posix()
    structured = result.structured
    if structured is not None and len(json.dumps(structured, default=str)) > limit:
        structured = None
    return result.model_copy(
        update={"text": f"{head}\n\n{note}", "structured": structured, "spilled_to": spilled_to}
    )
