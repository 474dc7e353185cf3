"""Walking a workspace tree and matching paths against glob patterns.

The walk goes by folder descriptors (`os.fwalk`), never follows a symlinked directory (so it
cannot leave the workspace or loop, even if a folder is swapped for a symlink mid-walk) and skips
well-known bulky folders such as `.git` and `node_modules` unless the walk starts inside one.
Overseer's own folders (shared/own_data.py) are left out wherever the walk meets them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mcp.server.mcpserver.exceptions import ToolError

from shared.own_data import identity_of

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)


@dataclass(frozen=True)
class Entry:
    """One name met by the walk; `folder` is a descriptor of its folder, valid until the next one."""

    rel: str
    """The path below the walk's start, `/`-separated."""
    is_dir: bool
    folder: int
    name: str


def walk(start: int, left_out: frozenset[tuple[int, int]] = frozenset()) -> Iterator[Entry]:
    """Every entry below the folder open as `start` (not itself), in a stable sorted order.

    `left_out`: (device, inode) of folders never entered nor shown, Overseer's own.
    """
    for dirpath, dirnames, filenames, folder in os.fwalk(".", dir_fd=start, follow_symlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIPPED_DIRS and not is_left_out(folder, d, left_out)
        )
        prefix = "" if dirpath == "." else dirpath.removeprefix("./") + "/"
        for name in dirnames:
            yield Entry(prefix + name, True, folder, name)
        for name in sorted(filenames):
            yield Entry(prefix + name, False, folder, name)


def is_left_out(folder: int, name: str, left_out: frozenset[tuple[int, int]]) -> bool:
    """Whether the folder `name` in the folder open as `folder` is one of `left_out` (a symlink never is)."""
    if not left_out:
        return False
    try:
        return identity_of(os.stat(name, dir_fd=folder, follow_symlinks=False)) in left_out
    except OSError:
        return True  # gone or unreadable meanwhile: nothing to show either way


def check_pattern(pattern: str) -> None:
    """Refuse a glob pattern that could name something outside the folder it is matched in."""
    if "\x00" in pattern:
        raise ToolError(f"pattern {pattern!r} contains a NUL byte")
    if not pattern:
        raise ToolError("pattern is empty")
    if pattern.startswith(("/", "~")) or os.path.isabs(pattern):
        raise ToolError(
            f"pattern '{pattern}' is absolute or starts with '~'; patterns are relative to the search folder"
        )
    if ".." in pattern.split("/"):
        raise ToolError(f"pattern '{pattern}' contains '..'; patterns cannot leave the search folder")


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex for a `/`-separated glob.

    `**` spans folders, `*` and `?` stay within one, `[...]` is a character class.
    """
    parts: list[str] = []
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        parts.append(_translate_segment(segment) + ("" if last else "/"))
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def _translate_segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
