"""Search and listing results never show what a deny rule forbids reading.

`grep` with no path, `glob "secrets/*"` or `list_dir .` reach into folders a `Read(...)` deny
rule covers, and their arguments cannot say which files they will reach. So the results of the
file server's search tools are filtered before anyone (the model, the transcript, a spill file)
sees them: each line naming a denied path is dropped, and a last line says how many were
hidden, never which. Filtering fails closed: a grep line whose path could be read more than one
way is dropped if any reading is denied.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, Literal

from backend.domain.tools import ToolResult, full_tool_name

SearchKind = Literal["grep", "glob", "list_dir"]

SEARCH_TOOLS: dict[str, SearchKind] = {full_tool_name("file", kind): kind for kind in ("grep", "glob", "list_dir")}

Redactor = Callable[[ToolResult], ToolResult]

# The file server's own notes (mcp_servers/file/searching.py); only ever a result's last line.
_NOTE = re.compile(
    r"\[more than \d+ matches; narrow the pattern( or the path)?\]"
    r"|\[\d+ more entries not shown\]"
    r"|no paths match '.*' under .*"
    r"|no matches for .* under .*"
    r"|\(empty directory .*\)",
    re.DOTALL,
)
_GREP_LINE_NUMBER = re.compile(r":\d+:")


def search_redactor(name: str, arguments: dict[str, Any], hidden: Callable[[str], bool]) -> Redactor | None:
    """For a file-server search, what hides its denied lines; None for any other tool.

    `hidden(path)` says whether a deny rule forbids reading `path` (as the model would write it:
    relative to the workspace, or absolute).
    """
    kind = SEARCH_TOOLS.get(name)
    if kind is None:
        return None

    def redact(result: ToolResult) -> ToolResult:
        return hide_denied(kind, arguments, result, hidden)

    return redact


def hide_denied(
    kind: SearchKind, arguments: dict[str, Any], result: ToolResult, hidden: Callable[[str], bool]
) -> ToolResult:
    """`result` without the lines that name a denied path, and a line saying how many went."""
    if result.is_error or not result.text:
        return result
    lines = result.text.split("\n")
    kept: list[str] = []
    dropped = 0
    for index, line in enumerate(lines):
        if index == len(lines) - 1 and _NOTE.fullmatch(line):
            kept.append(line)
            continue
        if any(hidden(path) for path in _paths_named(kind, line, arguments)):
            dropped += 1
        else:
            kept.append(line)
    if not dropped:
        return result
    what = "line" if dropped == 1 else "lines"
    kept.append(f"[{dropped} {what} hidden: deny rules forbid reading what they name]")
    # The structured copy would carry the hidden lines: the text is the whole answer now.
    return result.model_copy(update={"text": "\n".join(kept), "structured": None})


def _paths_named(kind: SearchKind, line: str, arguments: dict[str, Any]) -> list[str]:
    if kind == "grep":
        # `path:number:text`, where the path itself may hold `:12:`: every reading counts.
        return [line[: m.start()] for m in _GREP_LINE_NUMBER.finditer(line) if m.start() > 0]
    entry = line.rstrip("/")
    if not entry:
        return []
    if kind == "glob":
        return [entry]
    folder = arguments.get("path") if isinstance(arguments.get("path"), str) else None
    return [os.path.join(folder or ".", entry)]
