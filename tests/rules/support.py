"""Small builders the permission tests share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from backend.domain.tools import ToolAnnotations
from backend.rules.policy_engine import Evaluation, Policy, PolicyEngine, ToolCallView
from backend.rules.grammar import RuleSet

REPO = Path("/repo")
SHELL = "mcp__shell__exec"
READ = "mcp__file__read_file"
WRITE = "mcp__file__write_file"
EDIT = "mcp__file__edit_file"
LIST = "mcp__file__list_dir"
GLOB = "mcp__file__glob"
NAVIGATE = "mcp__browser__navigate"


def rules(
    *,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    source: str = "user",
) -> RuleSet:
    """A rule set from plain lists."""
    return RuleSet.from_config({"allow": list(allow), "ask": list(ask), "deny": list(deny)}, source=source)


def call(
    name: str,
    workspace: Path = REPO,
    annotations: ToolAnnotations | None = None,
    **arguments: Any,
) -> ToolCallView:
    """A call to evaluate."""
    return ToolCallView(name=name, arguments=arguments, workspace=workspace, annotations=annotations)


def shell(command: Any, workspace: Path = REPO) -> ToolCallView:
    """A shell call."""
    return call(SHELL, workspace, command=command)


def decide(
    tool_call: ToolCallView,
    *,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    policies: Mapping[str, Policy] | None = None,
    mode: str | None = None,
    mode_policies: Mapping[str, Policy] | None = None,
    read_only_auto_allow: bool = False,
) -> Evaluation:
    """Evaluate one call against user rules and (by default) the built-in policies."""
    engine = PolicyEngine(
        rules(allow=allow, ask=ask, deny=deny), policies, read_only_auto_allow=read_only_auto_allow
    )
    return engine.evaluate(tool_call, mode=mode, mode_policies=mode_policies)
