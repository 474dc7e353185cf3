"""Reading a text file one page at a time."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.anchored import Anchored, opened_file
from mcp_servers._shared.limits import READ_PAGE_BYTES
from mcp_servers._shared.textfiles import SNIFF_BYTES, looks_binary
from mcp_servers._shared.workspace import refuse_hard_links


def read_page(
    target: Anchored, *, offset: int, limit: int | None, page_bytes: int = READ_PAGE_BYTES
) -> str:
    """Lines `offset` .. `offset + limit` of a text file, at most `page_bytes` of them.

    When lines remain after the page, a last line says how many were shown and
    the offset to continue from. A single line longer than the page is cut, and
    the next page starts at the following line.
    """
    shown = target.shown
    with opened_file(target) as (fd, st):
        require_text_file(fd, st, shown)
        with os.fdopen(os.dup(fd), "r", encoding="utf-8", errors="replace", newline="") as fh:
            return _page(fh, shown, offset=offset, limit=limit, page_bytes=page_bytes)


def _page(fh: Iterable[str], shown: str, *, offset: int, limit: int | None, page_bytes: int) -> str:
    shown_lines: list[str] = []
    used = 0
    total = 0
    cut_line: int | None = None
    full = False
    for index, line in enumerate(fh):
        total = index + 1
        if index < offset or full:
            continue
        if limit is not None and len(shown_lines) >= limit:
            full = True
            continue
        size = len(line.encode("utf-8"))
        if used + size > page_bytes:
            if shown_lines:
                full = True
                continue
            # One line bigger than a page: show its start so the reader makes progress.
            line = line.encode("utf-8")[:page_bytes].decode("utf-8", errors="ignore")
            cut_line = index
            size = page_bytes
        shown_lines.append(line)
        used += size
    if offset > 0 and offset >= total:
        raise ToolError(f"offset {offset} is past the end of '{shown}', which has {total} lines")
    text = "".join(shown_lines)
    if total == 0:
        return "(empty file)"
    notes: list[str] = []
    if cut_line is not None:
        notes.append(f"line {cut_line} is longer than the {page_bytes}-byte page and was cut")
    next_offset = offset + len(shown_lines)
    if next_offset < total:
        reason = (
            "limit reached"
            if limit is not None and len(shown_lines) >= limit
            else f"page limit {page_bytes} bytes"
        )
        notes.append(
            f"truncated ({reason}): showed lines {offset}-{next_offset - 1} (0-based) of {total}; "
            f"continue with offset={next_offset}"
        )
    if not notes:
        return text
    separator = "" if text.endswith("\n") else "\n"
    return text + separator + "".join(f"[{note}]\n" for note in notes).rstrip("\n")


def require_text_file(fd: int, st: os.stat_result, shown: str) -> None:
    """Refuse, with a message the model can act on, anything but a UTF-8 text file (opened as `fd`)."""
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"'{shown}' is a directory; use list_dir to see its entries")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"'{shown}' is not a regular file")
    refuse_hard_links(st, shown)
    try:
        binary = looks_binary(os.pread(fd, SNIFF_BYTES, 0))
    except OSError as exc:
        raise ToolError(f"cannot read '{shown}': {exc.strerror or exc}") from exc
    if binary:
        raise ToolError(f"'{shown}' is a binary file (or not UTF-8 text); it cannot be read as text")
