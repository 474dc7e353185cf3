"""Permissions: the rule grammar, its evaluation, and (elsewhere in this package) approvals and the gate."""

from backend.permissions.narrow import narrow_rules_for
from backend.permissions.policy import DEFAULT_POLICIES, Evaluation, Policy, PolicyEngine, ToolCallView
from backend.permissions.rules import Effect, Rule, RuleError, RuleSet, parse_rule

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
