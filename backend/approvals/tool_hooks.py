"""Tool hooks: code that runs around every tool call, whichever engine made it.

A `before_tool` hook may block a call; it cannot approve one (a hook's "allow" never skips the
rules). Defaults pass their input through, so a hook overrides only what it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backend.domain.tools import ToolResult
from backend.rules.policy_engine import ToolCallView


@dataclass(kw_only=True)
class Block:
    """A before_tool verdict: do not run the call; the model gets `message` as an error."""

    message: str


class ToolHooks:
    """Override any of these; the defaults change nothing."""

    async def before_tool(self, *, session_id: str, call: ToolCallView) -> Block | None:
        return None

    async def after_tool(self, *, session_id: str, call: ToolCallView, result: ToolResult) -> ToolResult:
        return result

    async def on_tool_error(self, *, session_id: str, call: ToolCallView, error: Exception) -> ToolResult | None:
        """Turn an unexpected error into a result; None keeps the default error result."""
        return None


class HookChain(ToolHooks):
    """Several hooks as one: the first block wins, results flow through each after_tool in turn."""

    def __init__(self, hooks: Sequence[ToolHooks] = ()) -> None:
        self.hooks = list(hooks)

    def add(self, hook: ToolHooks) -> None:
        self.hooks.append(hook)

    async def before_tool(self, *, session_id: str, call: ToolCallView) -> Block | None:
        for hook in self.hooks:
            verdict = await hook.before_tool(session_id=session_id, call=call)
            if verdict is not None:
                return verdict
        return None

    async def after_tool(self, *, session_id: str, call: ToolCallView, result: ToolResult) -> ToolResult:
        for hook in self.hooks:
            result = await hook.after_tool(session_id=session_id, call=call, result=result)
        return result

    async def on_tool_error(self, *, session_id: str, call: ToolCallView, error: Exception) -> ToolResult | None:
        for hook in self.hooks:
            replaced = await hook.on_tool_error(session_id=session_id, call=call, error=error)
            if replaced is not None:
                return replaced
        return None
