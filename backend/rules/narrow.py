"""The narrow rule an "always allow" (or "allow for session") decision writes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from backend.rules.policy_engine import ToolCallView
from backend.rules.grammar import SHELL_TOOL, Rule, RuleSet
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
    characters). Any other tool gives its single tool name.
    """
    if call.name != SHELL_TOOL:
        return [call.name]
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
