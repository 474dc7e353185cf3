"""What a hook's verdict may change of the rules' evaluation (configured_hooks.review)."""

from __future__ import annotations

from backend.approvals.configured_hooks import HookAllow, review
from backend.approvals.confinement import UnconfinedRun
from backend.approvals.hook_answers import HookAnswer, Verdict
from backend.rules import pinned_tools
from backend.rules.bootstrap_guard import InstructionChange
from backend.rules.policy_engine import Evaluation


def said(permission: str) -> Verdict:
    return Verdict(answers=[HookAnswer(principal="hook:check.sh", permission=permission, reason="because")])  # type: ignore[arg-type]


DEFAULT_ASK = Evaluation(verdict="ask", reason="no rule or policy matched: ask")


def test_a_hook_allow_answers_the_default_question_in_its_own_name() -> None:
    answered = review(DEFAULT_ASK, said("allow"))
    assert isinstance(answered, HookAllow) and answered.verdict == "allow" and answered.principal == "hook:check.sh"
    default_policy = Evaluation(verdict="ask", reason="policy mcp__shell__exec = ask (default)", source="default")
    assert review(default_policy, said("allow")).verdict == "allow"


def test_a_hook_allow_leaves_a_deny_an_ask_rule_an_admin_policy_the_sandbox_instruction_files_and_changed_tools_alone() -> None:
    kept = [
        Evaluation(verdict="deny", reason="deny rule", rule="Bash(curl *)", source="managed"),
        Evaluation(verdict="ask", reason="ask rule", rule="Bash(git push*)", source="user"),
        Evaluation(verdict="ask", reason="policy mcp__github = ask (user)", source="user"),
        UnconfinedRun(verdict="ask", reason="outside the sandbox", source="sandbox"),
        InstructionChange(verdict="ask", reason="changes AGENTS.md", files=("AGENTS.md",)),
        Evaluation(verdict="ask", reason="plan mode", source="mode:plan"),
        Evaluation(verdict="ask", reason="the tool changed since it was pinned", source=pinned_tools.CHANGED_SOURCE),
    ]
    for evaluation in kept:
        assert review(evaluation, said("allow")) is evaluation


def test_a_hook_deny_or_ask_tightens_whatever_the_rules_said() -> None:
    allowed = Evaluation(verdict="allow", reason="allow rule", rule="Bash", source="user")
    assert review(allowed, said("deny")).verdict == "deny"
    assert review(allowed, said("ask")).verdict == "ask"
    assert review(DEFAULT_ASK, said("deny")).source == "hook"
    denied = Evaluation(verdict="deny", reason="deny rule", rule="Bash(rm *)")
    assert review(denied, said("ask")) is denied
