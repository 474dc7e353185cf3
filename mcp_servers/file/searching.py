"""Listing folders and finding files by name (glob) or by content (grep)."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

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
from mcp_servers._shared.anchored import Anchored, opened_file
from mcp_servers._shared.textfiles import SNIFF_BYTES, looks_binary
from mcp_servers._shared.workspace import display_path, extra_links, one_line
from mcp_servers.file.walking import check_pattern, compile_glob, is_left_out, walk

LeftOut = frozenset[tuple[int, int]]
"""(device, inode) of Overseer's own folders: never listed, walked or searched."""

# Files are opened by name inside a folder's descriptor, never through a symlink, and a FIFO
# is opened without waiting for a writer (then skipped: only regular files are searched).
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def list_entries(folder: Anchored, left_out: LeftOut = frozenset()) -> str:
    """The folder's entries, sorted, one a line, folders with a trailing `/`; Overseer's own left out."""
    with _opened_folder(folder) as fd, os.scandir(fd) as entries:
        names = sorted(
            one_line(entry.name) + ("/" if entry.is_dir() else "")
            for entry in entries
            if not (entry.is_dir(follow_symlinks=False) and is_left_out(fd, entry.name, left_out))
        )
    if not names:
        return f"(empty directory {folder.shown})"
    lines = names[:LIST_DIR_MAX_ENTRIES]
    if len(names) > LIST_DIR_MAX_ENTRIES:
        lines.append(f"[{len(names) - LIST_DIR_MAX_ENTRIES} more entries not shown]")
    return "\n".join(lines)


def find_by_glob(root: Path, base: Anchored, pattern: str, left_out: LeftOut = frozenset()) -> str:
    """Paths under `base` (relative to it) matching `pattern`, shown relative to the workspace root."""
    check_pattern(pattern)
    matcher = compile_glob(pattern)
    hits: list[str] = []
    with _opened_folder(base) as fd:
        for entry in walk(fd, left_out):
            if not matcher.match(entry.rel):
                continue
            if len(hits) == GLOB_MAX_RESULTS:
                return "\n".join([*sorted(hits), f"[more than {GLOB_MAX_RESULTS} matches; narrow the pattern]"])
            hits.append(display_path(root, base.path / entry.rel) + ("/" if entry.is_dir else ""))
    return "\n".join(sorted(hits)) if hits else f"no paths match '{pattern}' under {base.shown}"


def search_contents(
    root: Path, base: Anchored, pattern: str, file_glob: str | None, left_out: LeftOut = frozenset()
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
    hits: list[str] = []
    for path, fh in _searched_files(base, name_filter, left_out):
        for number, text in _matching_lines(fh, compiled, deadline, pattern, time_limit):
            if len(hits) == GREP_MAX_MATCHES:
                hits.append(f"[more than {GREP_MAX_MATCHES} matches; narrow the pattern or the path]")
                return "\n".join(hits)
            hits.append(f"{display_path(root, path)}:{number}:{cut_line(text)}")
    return "\n".join(hits) if hits else f"no matches for {pattern!r} under {base.shown}"


def _searched_files(
    base: Anchored, name_filter: Callable[[str], bool], left_out: LeftOut
) -> Iterator[tuple[Path, IO[bytes]]]:
    """Each text file to search under `base` (or `base` itself), open, with its path."""
    with opened_file(base) as (fd, st):
        if stat.S_ISREG(st.st_mode):
            if not extra_links(st):
                with os.fdopen(os.dup(fd), "rb") as fh:
                    yield base.path, fh
            return
        if not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"'{base.shown}' is not a directory")
        for entry in walk(fd, left_out):
            if entry.is_dir or not name_filter(entry.rel):
                continue
            try:
                file_fd = os.open(entry.name, _OPEN_FLAGS, dir_fd=entry.folder)
            except OSError:
                continue  # a symlink (never followed: it may lead outside), or unreadable: skipped
            with os.fdopen(file_fd, "rb") as fh:
                # A hard-linked file may be another name for a file outside the workspace.
                found = os.fstat(file_fd)
                if stat.S_ISREG(found.st_mode) and not extra_links(found):
                    os.set_blocking(file_fd, True)
                    yield base.path / entry.rel, fh


@contextlib.contextmanager
def _opened_folder(folder: Anchored) -> Iterator[int]:
    """The folder open, or an error saying it does not exist or is not a folder."""
    with opened_file(folder) as (fd, st):
        if not stat.S_ISDIR(st.st_mode):
            raise ToolError(f"'{folder.shown}' is not a directory")
        yield fd


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
    fh: IO[bytes], compiled: regex.Pattern[str], deadline: float, pattern: str, time_limit: float
) -> Iterator[tuple[int, str]]:
    try:
        if looks_binary(fh.read(SNIFF_BYTES)):
            return
        fh.seek(0)
        lines = enumerate(fh, start=1)
        for number, raw in lines:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
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
