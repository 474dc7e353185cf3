"""Turning operating-system failures into errors the model can read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError


@contextmanager
def os_errors_as_tool_errors(action: str, shown: str) -> Iterator[None]:
    """Re-raise an `OSError` in the block as a `ToolError` naming `action` and the path.

    Without this the SDK would report a crash and the model would see no reason.
    """
    try:
        yield
    except OSError as exc:
        raise ToolError(f"cannot {action} '{shown}': {exc.strerror or exc}") from exc
