"""Our tools as Claude Code's hooks see them: `mcp__shell__exec` is `Bash` with `{"command": ...}`,
the file server's read, write and edit are `Read`, `Write` and `Edit` with an absolute `file_path`.

A hook written for Claude Code then works unchanged, and an `updatedInput` it returns in Claude
Code's shape is turned back into our tool's arguments. Any other tool keeps its own name and
arguments both ways.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from backend.rules.grammar import SHELL_TOOL, full_tool_name

CLAUDE_NAMES: dict[str, str] = {
    SHELL_TOOL: "Bash",
    full_tool_name("file", "read_file"): "Read",
    full_tool_name("file", "write_file"): "Write",
    full_tool_name("file", "edit_file"): "Edit",
    full_tool_name("file", "glob"): "Glob",
    full_tool_name("file", "grep"): "Grep",
    full_tool_name("file", "list_dir"): "LS",
}
"""Our tool -> the Claude Code tool a hook knows it as."""

# Our argument -> Claude Code's, for the tools above (the path is made absolute on the way out).
_KEYS: dict[str, dict[str, str]] = {
    "Edit": {"path": "file_path", "old_text": "old_string", "new_text": "new_string"},
    "Write": {"path": "file_path"},
    "Read": {"path": "file_path"},
}


def hook_tool_name(name: str) -> str:
    """The name a hook is told: the Claude Code alias, else ours."""
    return CLAUDE_NAMES.get(name, name)


def hook_names(name: str) -> tuple[str, ...]:
    """The names a matcher is read against: the alias and our own."""
    alias = CLAUDE_NAMES.get(name)
    return (alias, name) if alias else (name,)


def hook_tool_input(name: str, arguments: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """`arguments` as Claude Code would give them to a hook of this tool."""
    keys = _KEYS.get(CLAUDE_NAMES.get(name, ""))
    if keys is None:
        if name == SHELL_TOOL and "timeout" in arguments:  # Claude Code's Bash timeout is in ms
            return {**arguments, "timeout": int(float(arguments["timeout"]) * 1000)}
        return dict(arguments)
    shaped = {keys.get(k, k): v for k, v in arguments.items()}
    if isinstance(shaped.get("file_path"), str):
        shaped["file_path"] = os.path.normpath(workspace / shaped["file_path"])
    return shaped


def tool_arguments(name: str, hook_input: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """A hook's `updatedInput` (Claude Code's shape) as our tool's arguments: a whole replacement."""
    keys = _KEYS.get(CLAUDE_NAMES.get(name, ""))
    if keys is None:
        if name == SHELL_TOOL and isinstance(hook_input.get("timeout"), int | float):
            return {**hook_input, "timeout": hook_input["timeout"] / 1000}
        return dict(hook_input)
    reverse = {theirs: ours for ours, theirs in keys.items()}
    arguments = {reverse.get(k, k): v for k, v in hook_input.items()}
    path = arguments.get("path")
    if isinstance(path, str) and os.path.isabs(path):
        inside = Path(os.path.normpath(path))
        if inside.is_relative_to(workspace):  # a path inside the workspace goes back as it came
            arguments["path"] = str(inside.relative_to(workspace)) or "."
    return arguments
