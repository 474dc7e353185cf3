"""The narrow rule an "always allow" (or "allow for session") decision writes.

Narrow means this call, not the tool: a file tool's rule names the path it touches, a shell
rule the command's pattern, any other tool's rule its one argument's value. A call no such rule
can express exactly gets none; only an admin may then allow the whole tool.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Sequence

from backend.rules.param_match import PARAM_NAME
from backend.rules.path_match import path_candidates
from backend.rules.policy_engine import ToolCallView
from backend.rules.grammar import FILE_TOOLS, SHELL_TOOL, Rule, RuleError, RuleSet, parse_rule
from backend.rules.rule_match import Subject, allowing_rules
from backend.rules.shell_match import (
    CommandPart,
    ShellPattern,
    allow_match,
    analyse_command,
    escape_pattern,
)

# Programs whose first words name a subcommand: approving `npm test` approves `npm test *`.
# Anything else is approved exactly as run, so `rm -rf build` never becomes `rm *`.
SUBCOMMAND_PROGRAMS = frozenset(
    """git npm pnpm yarn bun npx cargo go docker podman kubectl helm pip pip3 uv poetry pdm hatch
    make just gh brew dotnet mvn gradle terraform rustup conda tox nox""".split()
)
_MAX_SUBCOMMAND_WORDS = 2
_SUBCOMMAND_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")


def narrow_rules_for(call: ToolCallView, *, rules: RuleSet | None = None) -> list[str]:
    """The narrowest rule(s) covering `call`, to show the person before saving them.

    A shell command gives one `mcp__shell__exec(...)` rule per part, in the space form
    (`mcp__shell__exec(npm test *)`); parts `rules` already allow are left out. It gives []
    (refuse) when the command hands an interpreter inline code (`python -c`, `bash -c`,
    `node -e`) or no allow rule could ever match it (unparseable, too long, invisible
    characters). A file tool gives the path it touches, workspace-relative
    (`mcp__file__write_file(./notes.txt)`, `mcp__file__edit_file(src/app.py)`; `//abs` outside
    it). Any other tool with exactly one argument gives `tool(param:value)`. Anything else, or a
    rule that would not match exactly this call, gives [].
    """
    if call.name in FILE_TOOLS:
        return _exact(call, _path_rule(call))
    if call.name != SHELL_TOOL:
        return _exact(call, _param_rule(call))
    command = call.arguments.get("command") if isinstance(call.arguments, dict) else None
    if not isinstance(command, str):
        return []
    analysis = analyse_command(command)
    if analysis.allow_blocker or analysis.inline_code:
        return []
    allow_rules: Sequence[Rule] = rules.allow if rules is not None else ()
    found: list[str] = []
    for part in analysis.parts:
        if part.deny_only or _already_allowed(part, allow_rules):
            continue
        found.append(f"{SHELL_TOOL}({narrow_pattern(part)})")
    return list(dict.fromkeys(found))


def narrow_pattern(part: CommandPart) -> str:
    """The pattern for one part: `program subcommand *` for known CLIs, otherwise the exact command."""
    words = part.words
    if words and words[0].raw in SUBCOMMAND_PROGRAMS:
        prefix = [words[0].raw]
        for word in words[1 : 1 + _MAX_SUBCOMMAND_WORDS]:
            if not _SUBCOMMAND_WORD.match(word.raw):
                break
            prefix.append(word.raw)
        if len(prefix) > 1:
            return " ".join(prefix) + " *"
    return escape_pattern(part.allow_forms[-1])


def _already_allowed(part: CommandPart, allow_rules: Sequence[Rule]) -> bool:
    return any(
        rule.tools.selects(SHELL_TOOL)
        and (
            rule.specifier is None
            or (isinstance(rule.specifier, ShellPattern) and allow_match(rule.specifier, part))
        )
        for rule in allow_rules
    )


_PATH_MAGIC = re.compile(r"([\\*?\[\]])")


def _path_rule(call: ToolCallView) -> str | None:
    """`tool(./name)`, `tool(dir/name)` inside the workspace, `tool(//abs/path)` outside it."""
    raw = call.arguments.get("path") if isinstance(call.arguments, dict) else None
    found = path_candidates(raw, call.workspace)
    if not found or "\n" in found[0]:
        return None
    path = found[0]  # the lexical reading; a symlink whose target differs fails the exactness check
    workspace = os.path.normpath(str(call.workspace))
    if path == workspace:
        return None  # the whole workspace is no narrow rule
    if path.startswith(workspace.rstrip("/") + "/"):
        rel = _PATH_MAGIC.sub(r"\\\1", path[len(workspace.rstrip("/")) + 1 :])
        spec = rel if "/" in rel and not rel.startswith("!") else "./" + rel
    else:
        spec = "//" + _PATH_MAGIC.sub(r"\\\1", path.lstrip("/"))
    return f"{call.name}({spec})"


def _param_rule(call: ToolCallView) -> str | None:
    """`tool(param:value)` for a call with exactly one scalar argument a glob can name exactly."""
    if not isinstance(call.arguments, dict) or len(call.arguments) != 1:
        return None
    [(name, value)] = call.arguments.items()
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool | int | float):
        text = json.dumps(value)
    else:
        return None
    if not PARAM_NAME.match(str(name)) or "*" in text:
        return None  # a star is always a wildcard in a parameter glob
    return f"{call.name}({name}:{text})"


MAX_ARGUMENT_RULE_VALUE = 120
"""Longer values (a message body, a document) make no standing rule a person would read."""


def argument_rules_for(call: ToolCallView, *, leave_out: Collection[str] = ()) -> list[str]:
    """Standing rules for an MCP tool narrowed by one of its arguments (issue 34, item 4).

    `mcp__mail__send(to:ops@example.com)` lets later calls to that address run, whatever their
    other arguments: wider than this call, far narrower than the tool. One rule per short scalar
    argument, in the call's order; none for the file tools and the shell (their narrow rules name
    a path or a command), none for arguments named in `leave_out` (those carrying an earlier
    result's text), none already given by `narrow_rules_for`, and only rules that match this call.
    """
    if call.name in FILE_TOOLS or call.name == SHELL_TOOL or not call.name.startswith("mcp__"):
        return []
    if not isinstance(call.arguments, dict) or len(call.arguments) < 2:
        return []  # one argument: narrow_rules_for's rule is this one already
    found: list[str] = []
    for name, value in call.arguments.items():
        if name in leave_out:
            continue
        single = ToolCallView(name=call.name, arguments={name: value}, workspace=call.workspace)
        rule = _param_rule(single)
        if rule is None or len(rule) - len(call.name) - len(name) - 3 > MAX_ARGUMENT_RULE_VALUE or "\n" in rule:
            continue
        found.extend(_exact(call, rule))
    return found


def _exact(call: ToolCallView, rule: str | None) -> list[str]:
    """[rule] when it parses and allows `call`; else [] (no narrow rule covers the call)."""
    if rule is None:
        return []
    try:
        parsed = parse_rule(rule, effect="allow", source="approval")
    except RuleError:
        return []
    subject = Subject(call.name, call.arguments, call.workspace)
    if parsed is None or allowing_rules([parsed], subject, write_allowed=lambda _: False) is None:
        return []
    return [rule]
