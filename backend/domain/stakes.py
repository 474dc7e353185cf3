"""What a waiting call puts at stake, as the approval card shows it (issue 34, item 4).

Values only: the rules rank a call (backend/rules/risk.py), the gate finds result text in its
arguments (backend/approvals/result_taint.py); the approval carries both to the card and the API.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

StakeKind = Literal["destructive", "open_world", "read_only"]
"""What a tool's annotations say it does, most dangerous first."""

Encoding = Literal["plain", "base64", "hex"]
"""How remembered text was found in an argument: as it was, or encoded."""


class Stake(BaseModel):
    """One thing a call puts at stake, ranked by its tool's annotations, in the card's words."""

    kind: StakeKind
    text: str
    """"Deletes or overwrites data", "Reaches outside systems", "Only reads"."""


class CarriedResult(BaseModel):
    """An argument carries text that came from an earlier tool result of the same session."""

    argument: str
    """Where in the arguments: `body`, `headers.Authorization`, `items[2]`."""
    tool_name: str
    """The tool whose result held the text."""
    step: int
    """The result's place among the session's tool results this host has seen (1 = the first)."""
    tool_call_id: str
    encoding: Encoding
    looks_secret: bool = False
    """A credential-like piece (or any piece sent encoded), not merely an id: it makes an allowed
    call of a third-party tool that is not read-only ask."""
    text: str = ""
    """The card's sentence: "This argument contains text from the result of ... (step 3)"."""


def carried_text(tool_name: str, step: int, encoding: Encoding) -> str:
    """The card's sentence for text of `tool_name`'s result found in an argument."""
    how = "" if encoding == "plain" else f", {encoding}-encoded"
    return f"This argument contains text from the result of {tool_name} (step {step}{how})"
