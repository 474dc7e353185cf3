"""Listing folders and finding files by name (glob) or by content (grep)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.limits import GLOB_MAX_RESULTS, GREP_MAX_MATCHES, LIST_DIR_MAX_ENTRIES, cut_line
from mcp_servers._shared.textfiles import SNIFF_BYTES, looks_binary
from mcp_servers._shared.workspace import display_path, is_inside, one_line
from mcp_servers.file.walking import check_pattern, compile_glob, walk


def list_entries(folder: Path, shown: str) -> str:
    """The folder's entries, sorted, one a line, folders with a trailing `/`."""
    require_dir(folder, shown)
    names = sorted(one_line(entry.name) + ("/" if entry.is_dir() else "") for entry in folder.iterdir())
    if not names:
        return f"(empty directory {shown})"
    lines = names[:LIST_DIR_MAX_ENTRIES]
    if len(names) > LIST_DIR_MAX_ENTRIES:
        lines.append(f"[{len(names) - LIST_DIR_MAX_ENTRIES} more entries not shown]")
    return "\n".join(lines)


def find_by_glob(root: Path, base: Path, shown: str, pattern: str) -> str:
    """Paths under `base` (relative to it) matching `pattern`, shown relative to the workspace root."""
    require_dir(base, shown)
    check_pattern(pattern)
    regex = compile_glob(pattern)
    hits: list[str] = []
    for path, is_dir in walk(base):
        rel = path.relative_to(base).as_posix()
        if not regex.match(rel):
            continue
        if len(hits) == GLOB_MAX_RESULTS:
            return "\n".join([*sorted(hits), f"[more than {GLOB_MAX_RESULTS} matches; narrow the pattern]"])
        hits.append(display_path(root, path) + ("/" if is_dir else ""))
    return "\n".join(sorted(hits)) if hits else f"no paths match '{pattern}' under {shown}"


def search_contents(root: Path, base: Path, shown: str, pattern: str, file_glob: str | None) -> str:
    """`file:line:text` for each line matching the regex `pattern` in text files under `base`."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc
    name_filter = _file_filter(file_glob)
    if base.is_file():
        files = [base]
    else:
        require_dir(base, shown)
        files = (p for p, is_dir in walk(base) if not is_dir and name_filter(p.relative_to(base).as_posix()))
    hits: list[str] = []
    for path in files:
        # A symlinked file may point outside the workspace: never read it.
        if not is_inside(root, path) or not path.is_file():
            continue
        for number, text in _matching_lines(path, regex):
            if len(hits) == GREP_MAX_MATCHES:
                hits.append(f"[more than {GREP_MAX_MATCHES} matches; narrow the pattern or the path]")
                return "\n".join(hits)
            hits.append(f"{display_path(root, path)}:{number}:{cut_line(text)}")
    return "\n".join(hits) if hits else f"no matches for {pattern!r} under {shown}"


def require_dir(path: Path, shown: str) -> None:
    """Refuse a path that is not an existing folder."""
    if not path.exists():
        raise ToolError(f"'{shown}' does not exist")
    if not path.is_dir():
        raise ToolError(f"'{shown}' is not a directory")


def _file_filter(file_glob: str | None) -> Callable[[str], bool]:
    if file_glob is None:
        return lambda rel: True
    check_pattern(file_glob)
    regex = compile_glob(file_glob)
    if "/" in file_glob:
        return lambda rel: regex.match(rel) is not None
    # Like ripgrep: a pattern without a slash matches the file name at any depth.
    return lambda rel: regex.match(rel.rsplit("/", 1)[-1]) is not None


def _matching_lines(path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        with path.open("rb") as fh:
            if looks_binary(fh.read(SNIFF_BYTES)):
                return
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                line = line.rstrip("\r\n")
                if regex.search(line):
                    yield number, line
    except OSError:
        return  # unreadable files are skipped, as grep -s does
