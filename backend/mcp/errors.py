"""The pool's exceptions: the lane for programming errors, never for what a tool did.

Anything the model should read (a tool failed, timed out, its server crashed) comes back as a
`ToolResult` with `is_error=True` instead.
"""

from __future__ import annotations


class McpPoolError(Exception):
    """The pool was used wrongly: called before `start()`, started twice, bad configuration."""


class ToolNotFound(McpPoolError, LookupError):
    """A tool name that no configured, enabled server offers."""

    def __init__(self, name: str, reason: str = "no such MCP tool") -> None:
        super().__init__(f"{reason}: {name!r}")
        self.name = name
