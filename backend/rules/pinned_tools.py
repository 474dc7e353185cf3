"""What the rules make of a tool's definition (issue 34, item 3), pure.

- A tool whose definition changed since it was pinned (backend/mcp/tool_pins.py) asks, whatever
  allows it: allow rules, policies, standing "always allow", auto-approve. A deny still denies.
  A rule written for the old tool does not silently cover the new one.
- A tool a third-party server annotates `destructiveHint: true` asks unless a rule or policy
  names that tool. An allow that covers a whole server or a glob (`mcp__github`,
  `mcp__github__*`, a server's `always_allow` policy) was written without this tool in view,
  so it does not cover it; `mcp__github__delete_repo` (with or without an argument pattern)
  does. Trusted servers (Overseer's own by default) keep their rules as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from backend.domain.tool_pins import ToolChange
from backend.domain.tools import ToolAnnotations, split_tool_name
from backend.rules.grammar import Rule, ToolSelector

CHANGED_SOURCE = "tool_pin"
"""The `source` of an evaluation that asks because the tool changed."""
DESTRUCTIVE_SOURCE = "destructive_hint"
"""The `source` of an evaluation that asks because a broad allow does not cover a destructive tool."""


def changed_reason(change: ToolChange) -> str:
    """Why a changed tool's call asks, in the card's words."""
    what = ", ".join(change.fields) or "its definition could not be checked"
    return (
        f"the tool's definition changed since it was pinned ({what}): every call asks until an admin "
        "accepts the new definition"
    )


def needs_naming(name: str, annotations: ToolAnnotations | None, trusted_servers: Collection[str]) -> bool:
    """Whether only a rule or policy naming the tool may allow it: a destructive tool of a server
    that is not trusted."""
    server = (split_tool_name(name) or ("", ""))[0]
    return annotations is not None and annotations.destructiveHint is True and server not in trusted_servers


def names_tool(selector: ToolSelector, name: str) -> bool:
    """Whether a rule's or policy's tool part names this one tool (not a server, not a glob)."""
    return selector.names is not None and name in selector.names


def naming_rules(rules: Sequence[Rule], name: str) -> list[Rule]:
    """The allowing rules that name the tool itself."""
    return [rule for rule in rules if names_tool(rule.tools, name)]


def broad_allow_reason(what: str) -> str:
    """Why a destructive tool asks although `what` (a server-wide rule or policy) would allow it."""
    return (
        f"{what} covers the whole server, and the server says this tool is destructive: ask "
        "(a rule naming the tool may allow it)"
    )
