"""Which calls look High risk: the server's copy of the dashboard's rule (web/src/risk.ts).

The card's "High risk" banner and the auto-approve switch read the same rule: a shell command
that can delete data, change permissions or run code fetched from the network, or an approval
whose reason says it touches something sensitive. Auto-approve leaves such calls to a person
unless the person who turned it on chose to include them. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from backend.domain.stakes import CarriedResult, Stake, StakeKind
from backend.domain.tools import ToolAnnotations
from backend.rules.grammar import SHELL_TOOL

HIGH_RISK_COMMAND = re.compile(
    r"(\brm\s+-[a-zA-Z]*[rf]|\bsudo\b|\bchmod\s+-R\b|\bchown\b|\bmkfs|\bdd\s+if=|\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b|\bgit\s+push\b[^;&|]*(--force|-f\b)|>\s*\/dev\/sd)"
)
"""Must stay the same pattern as HIGH_RISK_COMMAND in web/src/risk.ts (tests/rules/test_risk.py checks)."""

COMMAND_WARNING = "High risk: this command can delete data, change permissions or run code fetched from the network."


CARRIED_WARNING = "High risk: an argument carries text from an earlier tool result that looks like a credential."
"""Must stay the same words as in web/src/risk.ts."""


def high_risk(arguments: dict[str, Any], reason: str, carried: Sequence[CarriedResult] = ()) -> str | None:
    """The card's High-risk warning for a call with these arguments and approval reason, or None.

    `carried`: the approval's arguments that hold an earlier result's text (issue 34): a
    credential-like one going out is High risk, so auto-approve leaves it to a person.
    """
    command = arguments.get("command")
    if isinstance(command, str) and HIGH_RISK_COMMAND.search(command):
        return COMMAND_WARNING
    if any(c.looks_secret for c in carried):
        return CARRIED_WARNING
    if re.search("sensitive", reason, re.IGNORECASE):
        return f"High risk: {reason}"
    return None


# What a tool's annotations put at stake (issue 34, item 4), most dangerous first. Must say the
# same as STAKE_TEXT in web/src/risk.ts.
STAKE_TEXT: dict[StakeKind, str] = {
    "destructive": "Deletes or overwrites data",
    "open_world": "Reaches outside systems",
    "read_only": "Only reads, changes nothing",
}
STAKES_JOINER = " · At stake: "
"""Between an ask's reason and its stakes (the card splits there: web/src/risk.ts)."""


def stakes_of(name: str, annotations: ToolAnnotations | None) -> list[Stake]:
    """The call's stakes by its tool's annotations (hints from its server), most dangerous first.

    The shell is left out: every command carries destructiveHint, so the hint says nothing of a
    command (its High-risk pattern above does). A read-only tool that also says destructive is
    ranked destructive only.
    """
    if annotations is None or name == SHELL_TOOL:
        return []
    kinds: list[StakeKind] = []
    if annotations.destructiveHint is True:
        kinds.append("destructive")
    if annotations.openWorldHint is True:
        kinds.append("open_world")
    if annotations.readOnlyHint is True and annotations.destructiveHint is not True:
        kinds.append("read_only")
    return [Stake(kind=kind, text=STAKE_TEXT[kind]) for kind in kinds]


def with_stakes(reason: str, stakes: list[Stake]) -> str:
    """An ask's reason with what is at stake after it, so two asks differ by what they risk."""
    if not stakes:
        return reason
    return reason + STAKES_JOINER + "; ".join(s.text for s in stakes)
