"""Tool names a model API accepts: long or oddly spelled names under short, stable aliases.

OpenAI's chat completions and Anthropic's Messages API both refuse a tool name over 64
characters or with a character outside `[A-Za-z0-9_-]`, and `mcp__<server>__<tool>` easily
goes past that (a server named `modelcontextprotocol-everything-ref` gives 72; MCP allows tool
names of 128 characters, with dots). Each request sends such a name as an alias, the start of
the name and a hash of all of it, and maps the model's calls back, so the transcript, the gate,
approvals and rules only ever see the real name. The alias depends on the name alone (the
same in every request of a conversation), and is unique within the request. The claude-sdk
engine, whose CLI names MCP tools itself, lists such a tool under its alias instead
(`backend.engine.claude_sdk.proxy`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from backend.engine.models.model_types import ModelTurn

MAX_TOOL_NAME = 64
"""OpenAI's and Anthropic's limit on a tool's name."""

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_INVALID_CHARACTER = re.compile(r"[^A-Za-z0-9_-]")
HASH_LENGTH = 8


def accepted(name: str) -> bool:
    """Whether model APIs take `name` as it is."""
    return _VALID.fullmatch(name) is not None


def alias_of(name: str, *, hash_length: int = HASH_LENGTH) -> str:
    """`name`'s alias: its start, spelled as APIs allow, then `_` and a hash of the whole name."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:hash_length]
    head = _INVALID_CHARACTER.sub("_", name)[: MAX_TOOL_NAME - hash_length - 1]
    return f"{head}_{digest}"


@dataclass(kw_only=True)
class ToolNames:
    """The aliases of one request: real name -> alias, and back."""

    aliases: dict[str, str] = field(default_factory=dict)
    real: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_request(cls, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> ToolNames:
        """Aliases for every name the request would send that an API refuses: the tools offered
        and the earlier calls in the transcript (a tool may no longer be offered)."""
        names = [_tool_name(tool) for tool in tools]
        names += [_call_name(call) for message in messages for call in message.get("tool_calls") or []]
        return cls.for_names(names)

    @classmethod
    def for_names(cls, names: Iterable[str]) -> ToolNames:
        """Aliases for those of `names` an API refuses, unique among all of them."""
        names = list(names)
        sent = {name for name in names if name and accepted(name)}
        names_to_alias = sorted({name for name in names if name and not accepted(name)})
        table = cls()
        for name in names_to_alias:
            length = HASH_LENGTH
            alias = alias_of(name, hash_length=length)
            while alias in sent or alias in table.real:  # a clash: a longer hash, until it is unique
                length += 4
                alias = alias_of(name, hash_length=length)
            table.aliases[name] = alias
            table.real[alias] = name
            sent.add(alias)
        return table

    def real_name(self, name: str) -> str:
        """The real name of what the model called `name` (itself when it is not an alias)."""
        return self.real.get(name, name)

    def sent_name(self, name: str) -> str:
        """The name the model is shown for the real name `name`."""
        return self.aliases.get(name, name)

    def outgoing(
        self, tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The tools and messages as sent: every aliased name replaced (copies; the inputs are
        left as they are)."""
        if not self.aliases:
            return tools, messages
        return [self._tool(tool) for tool in tools], [self._message(message) for message in messages]

    def incoming(self, turn: ModelTurn) -> ModelTurn:
        """The model's turn with each alias it called by turned back into the real name."""
        if not self.real or not any(call.name in self.real for call in turn.tool_calls):
            return turn
        calls = [
            call.model_copy(update={"name": self.real[call.name]}) if call.name in self.real else call
            for call in turn.tool_calls
        ]
        return replace(turn, tool_calls=calls)

    def _tool(self, tool: dict[str, Any]) -> dict[str, Any]:
        name = _tool_name(tool)
        if name not in self.aliases:
            return tool
        return {**tool, "function": {**tool["function"], "name": self.aliases[name]}}

    def _message(self, message: dict[str, Any]) -> dict[str, Any]:
        calls = message.get("tool_calls")
        if not calls:
            return message
        renamed = []
        for call in calls:
            name = _call_name(call)
            if name in self.aliases:
                call = {**call, "function": {**call["function"], "name": self.aliases[name]}}
            renamed.append(call)
        return {**message, "tool_calls": renamed}


def _tool_name(tool: dict[str, Any]) -> str:
    return str((tool.get("function") or {}).get("name") or "")


def _call_name(call: dict[str, Any]) -> str:
    return str((call.get("function") or {}).get("name") or "")
