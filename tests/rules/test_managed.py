"""The managed policy's model (backend/rules/managed.py) and its layer at the top of the PolicyEngine."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.rules.grammar import RuleSet
from backend.rules.managed import MANAGED_PREFIX, ManagedLocked, ManagedPolicy
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine, ToolCallView

WS = Path("/tmp/ws")


def curl(command: str = "curl https://example.com") -> ToolCallView:
    return ToolCallView(name="mcp__shell__exec", arguments={"command": command}, workspace=WS)


def engine(managed: ManagedPolicy, **rules: list[str]) -> PolicyEngine:
    return PolicyEngine(RuleSet.from_config(rules, source="user"), DEFAULT_POLICIES, managed=managed.rules())


def test_an_unknown_key_is_refused_so_a_misspelt_switch_is_never_ignored():
    with pytest.raises(ValidationError, match="disable_alow_always"):
        ManagedPolicy.model_validate({"disable_alow_always": True})


def test_a_rule_that_does_not_parse_is_refused():
    with pytest.raises(ValidationError, match="unbalanced|Bash"):
        ManagedPolicy.model_validate({"permissions": {"deny": ["Bash(curl *"]}})


def test_an_allow_list_in_the_managed_permissions_is_refused():
    with pytest.raises(ValidationError, match="allow"):
        ManagedPolicy.model_validate({"permissions": {"allow": ["Bash"]}})


def test_hooks_are_kept_as_claude_code_writes_them_and_an_unknown_event_is_refused():
    block = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}]}
    [group] = ManagedPolicy.model_validate({"hooks": block}).hooks.groups("PreToolUse")
    assert (group.matcher, group.hooks[0].command) == ("Bash", "lint.sh")
    with pytest.raises(ValidationError, match="PreToolCall"):  # a managed guard that would never run
        ManagedPolicy.model_validate({"hooks": {"PreToolCall": []}})
    with pytest.raises(ValidationError, match="hooks"):  # a handler type Overseer cannot run
        ManagedPolicy.model_validate({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}})


def test_servers_are_admitted_by_name_command_or_url_and_others_are_refused_with_the_setting_named():
    policy = ManagedPolicy.model_validate(
        {
            "allowed_mcp_servers": [
                "github",
                {"command": "npx -y @corp/*"},
                {"serverUrl": "https://*.corp.example/*"},
            ]
        }
    )
    policy.source = "/etc/overseer/managed.yaml"
    assert policy.server_refusal("github", "anything", None) is None
    assert policy.server_refusal("tools", "npx -y @corp/tools", None) is None
    assert policy.server_refusal("remote", None, "https://mcp.corp.example/mcp") is None
    why = policy.server_refusal("evil", "npx -y evil-server", None)
    assert why is not None and "'evil'" in why and "/etc/overseer/managed.yaml: allowed_mcp_servers" in why
    assert policy.server_refusal("remote", None, "https://mcp.evil.example/mcp") is not None


def test_an_allowed_server_entry_names_exactly_one_thing():
    with pytest.raises(ValidationError, match="exactly one"):
        ManagedPolicy.model_validate({"allowed_mcp_servers": [{"name": "a", "url": "https://x"}]})


def test_an_allow_rule_written_as_a_managed_rule_is_refused_naming_the_setting_and_file():
    policy = ManagedPolicy.model_validate({"permissions": {"deny": ["Bash(curl *)"]}})
    policy.source = "/etc/overseer/managed.yaml"
    with pytest.raises(ManagedLocked) as locked:
        policy.check_allow_rules(["Read", "Bash(curl *)"])
    assert str(locked.value) == (
        "locked by managed policy (/etc/overseer/managed.yaml: permissions.deny 'Bash(curl *)')"
    )
    policy.check_allow_rules(["Bash(git status)"])  # anything else is not the managed policy's business


def test_a_managed_deny_denies_whatever_allows_the_call_below_it():
    policy = ManagedPolicy.model_validate({"permissions": {"deny": ["Bash(curl *)"]}})
    policies = {**DEFAULT_POLICIES, "mcp__shell__exec": "always_allow"}
    gate = PolicyEngine(
        RuleSet.from_config({"allow": ["Bash(curl *)", "Bash"]}, source="user"), policies, managed=policy.rules()
    )
    session = RuleSet.from_config({"allow": ["Bash(curl https://example.com)"]}, source="session")
    verdict = gate.evaluate(curl(), session_rules=session)
    assert verdict.verdict == "deny"
    assert verdict.source == "managed" and verdict.rule == "Bash(curl *)"
    assert verdict.reason.startswith(MANAGED_PREFIX)
    assert gate.evaluate(curl("git status"), session_rules=session).verdict == "allow"
    # "always allow" rules added later (with_rules) stay under it too.
    assert gate.with_rules(RuleSet.from_config({"allow": ["Bash(curl *)"]}, source="user")).evaluate(curl()).verdict == "deny"


def test_a_managed_deny_still_catches_a_curl_hidden_in_a_compound_command():
    policy = ManagedPolicy.model_validate({"permissions": {"deny": ["Bash(curl *)"]}})
    verdict = engine(policy, allow=["Bash"]).evaluate(curl("echo hi && curl https://example.com"))
    assert verdict.verdict == "deny" and verdict.source == "managed"


def test_a_managed_ask_asks_even_where_an_allow_rule_allows_but_a_deny_below_still_denies():
    policy = ManagedPolicy.model_validate({"permissions": {"ask": ["mcp__github"]}})
    call = ToolCallView(name="mcp__github__create_issue", arguments={"title": "x"}, workspace=WS)
    asked = engine(policy, allow=["mcp__github__create_issue"]).evaluate(call)
    assert (asked.verdict, asked.source) == ("ask", "managed")
    assert asked.reason.startswith(MANAGED_PREFIX)
    denied = engine(policy, deny=["mcp__github__create_issue"]).evaluate(call)
    assert (denied.verdict, denied.source) == ("deny", "user")


def test_a_managed_deny_on_a_path_hides_it_from_listings():
    policy = ManagedPolicy.model_validate({"permissions": {"deny": ["Read(secrets/**)"]}})
    assert engine(policy).hides("secrets/key.pem", WS)
    assert not engine(policy).hides("notes.txt", WS)


def test_a_tool_a_managed_rule_covers_whole_is_never_said_to_run_unasked():
    policy = ManagedPolicy.model_validate({"permissions": {"ask": ["mcp__github"], "deny": ["Bash(curl *)"]}})
    gate = engine(policy)
    assert gate.managed_catches("mcp__github__create_issue")
    assert not gate.managed_catches("mcp__shell__exec")  # only its curl calls are denied
    assert not gate.managed_catches("mcp__file__read_file")
