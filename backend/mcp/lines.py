"""Newline-delimited messages from a server's stdout, in linear time and with a cap per line.

Joining the unfinished line to every new chunk made a long line quadratic (20 MB took 12 s,
100 MB never finished and blocked the server's next call). Here a line's pieces are kept apart
and joined once; a line over the cap is not kept at all: only its head (enough to find the
request id) and its size are passed on, and the rest is skipped as it arrives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE_CHARS = 32 * 1024 * 1024
"""The longest message read from a server; the pool spills anything past 50 KB anyway."""
_HEAD_CHARS = 512
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class Oversized:
    """A line longer than the cap: its first characters and how long it was."""

    head: str
    length: int

    def request_id(self) -> int | str | None:
        """The JSON-RPC id, when it is near the start (where servers write it)."""
        found = _ID.search(self.head)
        if found is None:
            return None
        raw = found.group(1)
        return int(raw) if not raw.startswith('"') else raw[1:-1]


class LineSplitter:
    """Feed it chunks; it returns each complete line (or Oversized) once its newline arrives."""

    def __init__(self, limit: int = MAX_LINE_CHARS) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._size = 0
        self._head: str | None = None  # set while skipping an oversized line

    def feed(self, chunk: str) -> list[str | Oversized]:
        done: list[str | Oversized] = []
        start = 0
        while True:
            end = chunk.find("\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                return done
            done.append(self._finish())
            start = end + 1

    def _take(self, piece: str) -> None:
        if self._head is None and self._size + len(piece) > self.limit:
            self._head = ("".join(self._parts) + piece[:_HEAD_CHARS])[:_HEAD_CHARS]
            self._parts = []
        elif self._head is None:
            self._parts.append(piece)
        self._size += len(piece)

    def _finish(self) -> str | Oversized:
        line: str | Oversized = (
            Oversized(self._head, self._size) if self._head is not None else "".join(self._parts)
        )
        self._parts, self._size, self._head = [], 0, None
        return line
