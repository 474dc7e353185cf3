"""Rules that name no server or tool here are found: a warning, and a deny rule an error unless
listed as intended (backend/rules/rule_references.py; issue 35, item 12)."""

from __future__ import annotations

from backend.rules.rule_references import check_rule_references
from tests.rules.support import rules

# The reference memory server, renamed `memory-server` after a paste, with the built-in file server.
SERVERS = {
    "memory-server": {"create_entities", "delete_entities", "read_graph"},
    "file": {"read_file", "write_file"},
    "remote": None,  # configured, not listed yet
}


def test_a_deny_rule_for_a_renamed_server_is_an_error_naming_the_server_it_likely_meant():
    [finding] = check_rule_references(rules(deny=["mcp__memory__delete_entities"]), SERVERS)
    assert (finding.level, finding.rule, finding.effect) == ("error", "mcp__memory__delete_entities", "deny")
    assert "no MCP server is named 'memory'" in finding.message
    assert "'memory-server' (mcp__memory-server__delete_entities)" in finding.message
    assert "deny_unmatched_ok" in finding.message


def test_a_deny_rule_listed_as_intended_is_a_warning():
    [finding] = check_rule_references(
        rules(deny=["mcp__memory__delete_entities"]), SERVERS, intended=["mcp__memory__delete_entities"]
    )
    assert finding.level == "warning"


def test_allow_and_ask_rules_that_name_no_server_are_warnings():
    found = check_rule_references(rules(allow=["mcp__github__list_issues"], ask=["mcp__gh__*"]), SERVERS)
    assert sorted((f.effect, f.level) for f in found) == [("allow", "warning"), ("ask", "warning")]


def test_a_tool_a_listed_server_does_not_have_is_found_with_the_close_name():
    [finding] = check_rule_references(rules(deny=["mcp__memory-server__delete_entity"]), SERVERS)
    assert finding.level == "error"
    assert "has no tool 'delete_entity'" in finding.message and "'delete_entities'" in finding.message


def test_a_server_not_listed_yet_is_checked_by_its_name_alone():
    assert check_rule_references(rules(deny=["mcp__remote__anything", "mcp__remote__x_*"]), SERVERS) == []


def test_rules_that_cover_something_are_not_findings():
    covered = rules(
        allow=["mcp__file__read_file", "Read(./src/**)"],
        deny=["mcp__memory-server__delete_*", "mcp__memory-server", "mcp__*__delete_entities", "*", "mcp__file__write_file(secrets/**)"],
    )
    assert check_rule_references(covered, SERVERS) == []


def test_a_glob_that_matches_no_server_or_no_listed_tool_is_found():
    found = check_rule_references(rules(deny=["mcp__mem*__drop_*", "mcp__gh*"]), SERVERS)
    assert [f.rule for f in found] == ["mcp__mem*__drop_*", "mcp__gh*"]
    assert all(f.level == "error" for f in found)


def test_a_claude_code_alias_for_a_built_in_server_that_is_off_is_only_a_warning():
    [finding] = check_rule_references(rules(deny=["Bash(rm *)"]), SERVERS)
    assert finding.level == "warning" and "built-in shell server" in finding.message
