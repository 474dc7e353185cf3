"""Writing and editing text files, through descriptors that never follow a swapped-in symlink."""

from __future__ import annotations

import os
import stat

from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.anchored import Anchored, open_at, opened_parent, stat_at
from mcp_servers._shared.workspace import replace_at
from mcp_servers.file.reading import require_text_file


def write_text(target: Anchored, content: str) -> str:
    """Write `content` (UTF-8, newlines as given) to the file, creating parent folders."""
    shown = target.shown
    with opened_parent(target, create=True) as parent:
        st = stat_at(parent, target.name)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ToolError(f"'{shown}' is a directory; give a file path")
        data = content.encode("utf-8")
        replace_at(parent, target.name, data)  # a new file renamed into place: never through a link
    return f"wrote {len(data)} bytes to {shown}"


def edit_text(target: Anchored, old_text: str, new_text: str) -> str:
    """Replace the one occurrence of `old_text` in the file with `new_text`.

    Zero or several occurrences are refused, saying how many, so the model adds
    context instead of editing the wrong place.
    """
    shown = target.shown
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace")
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing to change")
    with opened_parent(target) as parent:
        fd = open_at(parent, target.name, target)
        with os.fdopen(fd, "r", encoding="utf-8", newline="") as fh:
            require_text_file(fd, os.fstat(fd), shown)
            try:
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
        replace_at(parent, target.name, data)
    return f"edited {shown}: replaced 1 occurrence ({len(data)} bytes written)"
