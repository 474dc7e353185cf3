"""Writing and editing text files."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.workspace import replace_file
from mcp_servers.file.reading import require_text_file


def write_text(path: Path, shown: str, content: str) -> str:
    """Write `content` (UTF-8, newlines as given) to `path`, creating parent folders."""
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; give a file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    replace_file(path, data)  # a new file renamed into place: never written through a hard link
    return f"wrote {len(data)} bytes to {shown}"


def edit_text(path: Path, shown: str, old_text: str, new_text: str) -> str:
    """Replace the one occurrence of `old_text` in the file with `new_text`.

    Zero or several occurrences are refused, saying how many, so the model adds
    context instead of editing the wrong place.
    """
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace")
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing to change")
    require_text_file(path, shown)
    try:
        with path.open("r", encoding="utf-8", newline="") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"'{shown}' is not UTF-8 text (byte {exc.start}); it cannot be edited as text"
        ) from exc
    count = text.count(old_text)
    if count == 0:
        raise ToolError(
            f"old_text was not found in '{shown}' (0 matches); copy it exactly, whitespace included"
        )
    if count > 1:
        raise ToolError(
            f"old_text occurs {count} times in '{shown}'; "
            "include more surrounding lines so it matches exactly once"
        )
    data = text.replace(old_text, new_text, 1).encode("utf-8")
    replace_file(path, data)
    return f"edited {shown}: replaced 1 occurrence ({len(data)} bytes written)"
