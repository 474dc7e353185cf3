"""Listing folders and finding files by name (glob) or by content (grep)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import regex
from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.limits import (
    GLOB_MAX_RESULTS,
    GREP_MAX_MATCHES,
    GREP_MAX_PATTERN_CHARS,
    GREP_TIME_LIMIT,
    LIST_DIR_MAX_ENTRIES,
    cut_line,
)
from mcp_servers._shared.textfiles import SNIFF_BYTES, looks_binary
from mcp_servers._shared.workspace import display_path, extra_links, is_inside, one_line
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
    matcher = compile_glob(pattern)
    hits: list[str] = []
    for path, is_dir in walk(base):
        rel = path.relative_to(base).as_posix()
        if not matcher.match(rel):
            continue
        if len(hits) == GLOB_MAX_RESULTS:
            return "\n".join([*sorted(hits), f"[more than {GLOB_MAX_RESULTS} matches; narrow the pattern]"])
        hits.append(display_path(root, path) + ("/" if is_dir else ""))
    return "\n".join(sorted(hits)) if hits else f"no paths match '{pattern}' under {shown}"


def search_contents(
    root: Path, base: Path, shown: str, pattern: str, file_glob: str | None
) -> str:
    """`file:line:text` for each line matching the regex `pattern` in text files under `base`.

    The server is shared by every session, so one search must not hold it: the pattern's length
    is capped, and the whole search has GREP_TIME_LIMIT seconds, matched by the `regex` engine
    with the GIL released (Python's `re` holds it, so one `(a+)+$` froze every other call).
    """
    if len(pattern) > GREP_MAX_PATTERN_CHARS:
        raise ToolError(f"the pattern is {len(pattern):,} characters; at most {GREP_MAX_PATTERN_CHARS:,} are searched")
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc
    time_limit = GREP_TIME_LIMIT
    deadline = time.monotonic() + time_limit
    name_filter = _file_filter(file_glob)
    if base.is_file():
        files = [base]
    else:
        require_dir(base, shown)
        files = (p for p, is_dir in walk(base) if not is_dir and name_filter(p.relative_to(base).as_posix()))
    hits: list[str] = []
    for path in files:
        # A symlinked file may point outside the workspace, a hard-linked one may be another
        # name for a file outside it: never read either.
        if not is_inside(root, path) or not path.is_file() or extra_links(path):
            continue
        for number, text in _matching_lines(path, compiled, deadline, pattern, time_limit):
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
    matcher = compile_glob(file_glob)
    if "/" in file_glob:
        return lambda rel: matcher.match(rel) is not None
    # Like ripgrep: a pattern without a slash matches the file name at any depth.
    return lambda rel: matcher.match(rel.rsplit("/", 1)[-1]) is not None


def _matching_lines(
    path: Path, compiled: regex.Pattern[str], deadline: float, pattern: str, time_limit: float
) -> Iterator[tuple[int, str]]:
    try:
        with path.open("rb") as fh:
            if looks_binary(fh.read(SNIFF_BYTES)):
                return
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                line = line.rstrip("\r\n")
                left = deadline - time.monotonic()
                try:
                    if left <= 0:
                        raise TimeoutError
                    found = compiled.search(line, timeout=left, concurrent=True)
                except TimeoutError:
                    raise ToolError(
                        f"the search for {pattern!r} ran out of time ({time_limit:g} s): simplify the "
                        "pattern (nested repeats such as (a+)+ can take forever) or narrow the path"
                    ) from None
                if found:
                    yield number, line
    except OSError:
        return  # unreadable files are skipped, as grep -s does
