"""Rules: pure policy. The rule grammar, its matchers, shell analysis, the policy engine and the guards.

Nothing here does I/O beyond resolving paths; approvals and the gate that use it live in `backend.approvals`."""

from backend.rules.narrow import narrow_rules_for
from backend.rules.grammar import Effect, Rule, RuleError, RuleSet, parse_rule
from backend.rules.policy_engine import DEFAULT_POLICIES, Evaluation, Policy, PolicyEngine, ToolCallView

__all__ = [
    "DEFAULT_POLICIES",
    "Effect",
    "Evaluation",
    "Policy",
    "PolicyEngine",
    "Rule",
    "RuleError",
    "RuleSet",
    "ToolCallView",
    "narrow_rules_for",
    "parse_rule",
]
