"""Which calls look High risk: the server's copy of the dashboard's rule (web/src/risk.ts).

The card's "High risk" banner and the auto-approve switch read the same rule: a shell command
that can delete data, change permissions or run code fetched from the network, or an approval
whose reason says it touches something sensitive. Auto-approve leaves such calls to a person
unless the person who turned it on chose to include them. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

HIGH_RISK_COMMAND = re.compile(
    r"(\brm\s+-[a-zA-Z]*[rf]|\bsudo\b|\bchmod\s+-R\b|\bchown\b|\bmkfs|\bdd\s+if=|\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b|\bgit\s+push\b[^;&|]*(--force|-f\b)|>\s*\/dev\/sd)"
)
"""Must stay the same pattern as HIGH_RISK_COMMAND in web/src/risk.ts (tests/rules/test_risk.py checks)."""

COMMAND_WARNING = "High risk: this command can delete data, change permissions or run code fetched from the network."


def high_risk(arguments: dict[str, Any], reason: str) -> str | None:
    """The card's High-risk warning for a call with these arguments and approval reason, or None."""
    command = arguments.get("command")
    if isinstance(command, str) and HIGH_RISK_COMMAND.search(command):
        return COMMAND_WARNING
    if re.search("sensitive", reason, re.IGNORECASE):
        return f"High risk: {reason}"
    return None
