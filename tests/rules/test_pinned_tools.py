"""What the rules make of a tool's definition (backend/rules/pinned_tools.py, issue 34 item 3):
a tool changed since it was pinned asks whatever allows it (a deny still denies), and a
third-party destructive tool is allowed only by a rule or policy naming it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from backend.domain.tool_pins import ToolChange
from backend.domain.tools import ToolAnnotations
from backend.rules.grammar import RuleSet
from backend.rules.pinned_tools import CHANGED_SOURCE, DESTRUCTIVE_SOURCE
from backend.rules.policy_engine import PolicyEngine
from tests.rules.support import WRITE, call, decide

LOOKUP = "mcp__crm__lookup_record"
DELETE = "mcp__crm__delete_record"
DESTRUCTIVE = ToolAnnotations(destructiveHint=True)
CHANGE = ToolChange(
    server="crm",
    tool="lookup_record",
    fields=["description"],
    before="description:\n  Look up a record.\n",
    after="description:\n  Delete the record.\n",
    fingerprint="b" * 64,
    pinned_fingerprint="a" * 64,
    pinned_at=datetime(2026, 1, 1, tzinfo=UTC),
)


def changed(name: str = LOOKUP, **arguments):
    return replace(call(name, **arguments), changed=CHANGE)


@pytest.mark.parametrize(
    "allowing",
    [
        {"allow": [LOOKUP]},
        {"allow": ["mcp__crm"]},
        {"allow": [f"{LOOKUP}(record_id:*)"]},
        {"policies": {LOOKUP: "always_allow"}},
        {"policies": {"mcp__crm": "always_allow"}},
    ],
)
def test_a_changed_tool_asks_whatever_allowed_it_before(allowing):
    assert decide(call(LOOKUP, record_id="42"), **allowing).verdict == "allow"
    verdict = decide(changed(record_id="42"), **allowing)
    assert (verdict.verdict, verdict.source) == ("ask", CHANGED_SOURCE)
    assert verdict.reason.startswith("the tool's definition changed since it was pinned (description)")


def test_a_changed_tool_is_still_denied_by_a_deny_rule_or_policy():
    assert decide(changed(), allow=[LOOKUP], deny=["mcp__crm"]).verdict == "deny"
    assert decide(changed(), allow=[LOOKUP], policies={LOOKUP: "deny"}).verdict == "deny"


def test_a_destructive_third_party_tool_is_not_allowed_by_a_rule_or_policy_for_its_whole_server():
    for broad in ({"allow": ["mcp__crm"]}, {"allow": ["mcp__crm__*"]}, {"policies": {"mcp__crm": "always_allow"}}):
        verdict = decide(call(DELETE, annotations=DESTRUCTIVE), **broad)
        assert (verdict.verdict, verdict.source) == ("ask", DESTRUCTIVE_SOURCE), broad
        assert "covers the whole server, and the server says this tool is destructive" in verdict.reason
    # Not destructive: the server-wide rule covers it as before.
    assert decide(call(LOOKUP, annotations=ToolAnnotations(readOnlyHint=True)), allow=["mcp__crm"]).verdict == "allow"


def test_a_rule_or_policy_naming_the_destructive_tool_allows_it():
    assert decide(call(DELETE, annotations=DESTRUCTIVE), allow=[DELETE]).verdict == "allow"
    assert decide(call(DELETE, annotations=DESTRUCTIVE, id="7"), allow=[f"{DELETE}(id:7)"]).verdict == "allow"
    assert decide(call(DELETE, annotations=DESTRUCTIVE), policies={DELETE: "always_allow"}).verdict == "allow"
    # Named next to a broad one, the naming rule is the one that allows.
    verdict = decide(call(DELETE, annotations=DESTRUCTIVE), allow=["mcp__crm", DELETE])
    assert (verdict.verdict, verdict.rule) == ("allow", DELETE)


def test_a_destructive_tool_with_no_rule_asks_and_a_server_deny_policy_still_denies():
    assert decide(call(DELETE, annotations=DESTRUCTIVE), allow=["mcp__crm"], policies={"mcp__crm": "deny"}).verdict == "deny"
    assert decide(call(DELETE, annotations=DESTRUCTIVE)).verdict == "ask"


def test_overseers_own_destructive_tools_keep_their_server_wide_rules():
    assert decide(call(WRITE, annotations=DESTRUCTIVE, path="notes.txt", content="x"), allow=["mcp__file"]).verdict == "allow"


def test_the_servers_page_says_a_destructive_tool_under_a_server_wide_allow_policy_asks():
    server_wide = PolicyEngine(RuleSet(), {"mcp__crm": "always_allow"})
    assert server_wide.effective_policy(DELETE, DESTRUCTIVE) == "ask"
    assert server_wide.effective_policy(LOOKUP, ToolAnnotations(readOnlyHint=True)) == "always_allow"
    assert PolicyEngine(RuleSet(), {DELETE: "always_allow"}).effective_policy(DELETE, DESTRUCTIVE) == "always_allow"
