"""Output limits shared by the tool servers, and the helpers that enforce them."""

from __future__ import annotations

READ_PAGE_BYTES = 51_200
"""The most text one `read_file` call returns."""

SHELL_OUTPUT_BYTES = 204_800
"""The most output (its tail) one `exec` call returns."""

GLOB_MAX_RESULTS = 1_000
GREP_MAX_MATCHES = 500
GREP_MAX_PATTERN_CHARS = 1_000
GREP_TIME_LIMIT = 10.0
"""Seconds one grep may take in all: the file server is shared by every session."""
LIST_DIR_MAX_ENTRIES = 2_000
LINE_MAX_CHARS = 500
"""A grep hit longer than this is cut, so one minified file cannot fill the result."""


class TailBuffer:
    """Keeps the last `limit` bytes written to it and counts the bytes it dropped.

    Memory stays bounded however much a command prints.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dropped = 0
        self._data = bytearray()

    def write(self, chunk: bytes) -> None:
        """Append `chunk`, dropping the oldest bytes beyond the limit."""
        self._data += chunk
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.dropped += excess

    def getvalue(self) -> bytes:
        """The kept tail."""
        return bytes(self._data)


def cut_line(text: str, limit: int = LINE_MAX_CHARS) -> str:
    """`text` cut to `limit` characters, with a marker when it was longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"
