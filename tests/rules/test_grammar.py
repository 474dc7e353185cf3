"""Rule strings: parsing, aliases, refusal of unanchored allows, rule sets."""

from __future__ import annotations

import logging

import pytest

from backend.rules.param_match import ParamPattern
from backend.rules.path_match import PathPattern
from backend.rules.grammar import (
    FILE_READ_TOOLS,
    FILE_WRITE_TOOLS,
    Rule,
    RuleError,
    RuleSet,
    UnanchoredAllowError,
    parse_rule,
)
from backend.rules.shell_match import ShellPattern
from backend.rules.url_match import DomainPattern


def rule(text: str, effect: str = "allow", source: str = "user") -> Rule:
    parsed = parse_rule(text, effect=effect, source=source)  # type: ignore[arg-type]
    assert parsed is not None
    return parsed


def test_bare_tool_equals_tool_star():
    for text in ("Bash", "Bash(*)", "Bash( * )"):
        parsed = rule(text)
        assert (parsed.kind, parsed.specifier) == ("tool", None)


def test_rule_remembers_its_raw_text_and_source():
    parsed = rule("  Bash(npm test *) ", "deny", "workspace")
    assert (parsed.raw, parsed.effect, parsed.source) == ("Bash(npm test *)", "deny", "workspace")
    assert parsed.label == "deny rule Bash(npm test *) (workspace)"


def test_bash_is_an_alias_of_shell_exec():
    parsed = rule("Bash(git status)")
    assert parsed.tools.selects("mcp__shell__exec")
    assert not parsed.tools.selects("mcp__shell__other")
    assert parsed.kind == "shell" and isinstance(parsed.specifier, ShellPattern)


def test_read_names_the_file_servers_reading_tools_and_edit_its_writing_tools():
    read, edit = rule("Read(src/**)"), rule("Edit(src/**)")
    assert all(read.tools.selects(t) for t in FILE_READ_TOOLS)
    assert not any(read.tools.selects(t) for t in FILE_WRITE_TOOLS)
    assert all(edit.tools.selects(t) for t in FILE_WRITE_TOOLS)
    assert not any(edit.tools.selects(t) for t in FILE_READ_TOOLS)
    assert read.kind == edit.kind == "path"


def test_webfetch_domain_is_an_alias_of_browser_navigate():
    parsed = rule("WebFetch(domain:example.com)")
    assert parsed.tools.selects("mcp__browser__navigate")
    assert isinstance(parsed.specifier, DomainPattern)


def test_webfetch_without_domain_prefix_is_malformed():
    with pytest.raises(RuleError):
        parse_rule("WebFetch(https://example.com)", effect="allow", source="user")


@pytest.mark.parametrize(
    ("text", "kind", "specifier_type"),
    [
        ("mcp__shell__exec(ls *)", "shell", ShellPattern),
        ("mcp__shell(ls *)", "shell", ShellPattern),
        ("mcp__file__read_file(src/**)", "path", PathPattern),
        ("mcp__file__*(src/**)", "path", PathPattern),
        ("mcp__browser__navigate(domain:x.com)", "url", DomainPattern),
        ("mcp__browser__navigate(url:https://x.com/*)", "param", ParamPattern),
        ("mcp__github__create_issue(repo:acme/*)", "param", ParamPattern),
    ],
)
def test_specifier_is_read_according_to_the_tool_kind(text, kind, specifier_type):
    parsed = rule(text)
    assert parsed.kind == kind and isinstance(parsed.specifier, specifier_type)


def test_server_rule_covers_every_tool_of_that_server_only():
    for text in ("mcp__github", "mcp__github__*"):
        parsed = rule(text)
        assert parsed.tools.selects("mcp__github__create_issue")
        assert not parsed.tools.selects("mcp__github-enterprise__create_issue")
        assert not parsed.tools.selects("mcp__gitlab__create_issue")


def test_tool_glob_after_a_literal_server_selects_matching_tools():
    parsed = rule("mcp__github__get_*")
    assert parsed.tools.selects("mcp__github__get_issue")
    assert not parsed.tools.selects("mcp__github__create_issue")
    assert not parsed.tools.selects("mcp__other__get_issue")


@pytest.mark.parametrize("text", ["mcp__*", "*", "mcp__git*", "mcp__*__exec", "mcp__*(repo:x)"])
def test_unanchored_allow_rule_is_refused(text):
    with pytest.raises(UnanchoredAllowError):
        parse_rule(text, effect="allow", source="user")


def test_unanchored_allow_rule_is_dropped_from_a_config_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="backend.rules.grammar"):
        loaded = RuleSet.from_config({"allow": ["mcp__*", "Bash(ls)"]}, source="user")
    assert [r.raw for r in loaded.allow] == ["Bash(ls)"]
    assert any("mcp__*" in message for message in caplog.messages)


@pytest.mark.parametrize("effect", ["deny", "ask"])
def test_deny_and_ask_rules_may_glob_freely(effect):
    for text, name in [("mcp__*", "mcp__a__b"), ("*", "mcp__x__y"), ("mcp__*__exec", "mcp__shell__exec")]:
        assert rule(text, effect).tools.selects(name)


@pytest.mark.parametrize(
    "text",
    [
        "Bash(",
        "Bash(ls",
        "Bash()",
        "Bash(   )",
        "Bash)",
        "Frobnicate(x)",
        "mcp__",
        "mcp____x",
        "mcp__srv__",
        "mcp__a b",
        "mcp__srv__x(y)(z",
        "mcp__github__create_issue(no-colon-here)",
        "Read(../outside/**)",
        "Read(!x)",
        "Bash(!rm *)",
        "",
    ],
)
def test_malformed_rule_raises_rule_error(text):
    with pytest.raises(RuleError):
        parse_rule(text, effect="allow", source="user")


def test_non_string_rule_raises_rule_error():
    with pytest.raises(RuleError):
        parse_rule(42, effect="deny", source="user")


def test_config_reports_every_malformed_rule_at_once():
    with pytest.raises(RuleError) as raised:
        RuleSet.from_config({"deny": ["Bash(rm *)", "Bash(", "Nope(x)"], "allow": "Bash"}, source="user")
    message = str(raised.value)
    assert "Bash(" in message and "Nope" in message and "allow must be a list" in message


def test_config_with_a_broken_deny_list_never_loads_partially():
    with pytest.raises(RuleError):
        RuleSet.from_config({"deny": ["Read(.env)", "Read("]}, source="workspace")


def test_claude_code_tool_without_an_overseer_counterpart_is_skipped_loudly(caplog):
    with caplog.at_level(logging.WARNING, logger="backend.rules.grammar"):
        loaded = RuleSet.from_config({"deny": ["WebSearch", "Bash(rm *)"]}, source="user")
    assert [r.raw for r in loaded.deny] == ["Bash(rm *)"]
    assert any("WebSearch" in message for message in caplog.messages)


def test_pasted_claude_code_block_loads(caplog):
    block = {
        "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./secrets/**)"],
        "ask": ["Bash(git push:*)"],
        "defaultMode": "default",
        "additionalDirectories": ["../docs/"],
    }
    with caplog.at_level(logging.WARNING):
        loaded = RuleSet.from_config(block, source="user")
    assert (len(loaded.allow), len(loaded.ask), len(loaded.deny)) == (2, 1, 3)
    assert not caplog.messages


def test_unknown_config_key_is_warned_about(caplog):
    with caplog.at_level(logging.WARNING, logger="backend.rules.grammar"):
        RuleSet.from_config({"alow": ["Bash"]}, source="user")
    assert any("alow" in message for message in caplog.messages)


def test_config_that_is_not_a_mapping_raises():
    with pytest.raises(RuleError):
        RuleSet.from_config(["Bash"], source="user")  # type: ignore[arg-type]


def test_empty_or_missing_config_gives_an_empty_set():
    assert len(RuleSet.from_config(None, source="user")) == 0
    assert len(RuleSet.from_config({"allow": None}, source="user")) == 0


def test_rule_sets_concatenate_keeping_every_source():
    user = RuleSet.from_config({"deny": ["Bash(rm *)"]}, source="user")
    workspace = RuleSet.from_config({"deny": ["Read(.env)"], "allow": ["Bash(ls)"]}, source="workspace")
    merged = user + workspace
    assert [(r.raw, r.source) for r in merged.deny] == [("Bash(rm *)", "user"), ("Read(.env)", "workspace")]
    assert [r.raw for r in RuleSet.concat(user, None, workspace).allow] == ["Bash(ls)"]
    assert len(user) == 1  # concatenation does not touch its inputs


def test_carve_out_is_a_path_rule_of_a_deny_or_ask_list():
    for effect in ("deny", "ask"):
        parsed = rule("Read(!.env.example)", effect)
        assert parsed.carve_out and parsed.kind == "path"
        assert parsed.label.startswith(f"{effect} carve-out")
