"""What an approval card says is at stake (issue 34, item 4): the gate asks, this words it.

An ask's reason gets the call's stakes after it (destructive, open-world, read-only, by the
tool's annotations), so asks differ by what they risk; the approval carries the stakes, the
arguments that hold an earlier result's text, and the standing rules narrowed by one argument.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from backend.domain.stakes import CarriedResult, Stake
from backend.domain.tools import split_tool_name
from backend.rules.narrow import argument_rules_for
from backend.rules.policy_engine import Evaluation, ToolCallView
from backend.rules.risk import stakes_of, with_stakes


@dataclass(kw_only=True)
class CardDetails:
    """The parts of a new approval this module words (passed to ApprovalBroker.open)."""

    reason: str
    stakes: list[Stake] = field(default_factory=list)
    carried_results: list[CarriedResult] = field(default_factory=list)
    argument_rules: list[str] = field(default_factory=list)


def card_details(
    view: ToolCallView,
    evaluation: Evaluation,
    carried: list[CarriedResult],
    *,
    standing: bool,
    trusted_servers: Collection[str],
) -> CardDetails:
    """The card's stakes, result-text flags and argument rules for one ask.

    The reason names the stakes of a third-party tool's call (Overseer's own tools ask in their
    own words: a command's High-risk pattern, a file's diff). `standing`: whether the call may
    be allowed beyond once (no argument rules otherwise). An argument that carries an earlier
    result's text is never offered as a standing rule.
    """
    stakes = stakes_of(view.name, view.annotations)
    leave_out = {c.argument for c in carried}
    server = (split_tool_name(view.name) or ("", ""))[0]
    return CardDetails(
        reason=evaluation.reason if server in trusted_servers else with_stakes(evaluation.reason, stakes),
        stakes=stakes,
        carried_results=carried,
        argument_rules=argument_rules_for(view, leave_out=leave_out) if standing else [],
    )
