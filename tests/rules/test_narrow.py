"""The narrow rules an "always allow" decision writes."""

from __future__ import annotations

import pytest

from backend.rules.narrow import argument_rules_for, narrow_rules_for
from backend.rules.policy_engine import PolicyEngine
from backend.rules.grammar import RuleSet

from .support import EDIT, LIST, READ, WRITE, call, rules, shell


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm test", ["mcp__shell__exec(npm test *)"]),
        ("npm test --watch", ["mcp__shell__exec(npm test *)"]),
        ("npm run build", ["mcp__shell__exec(npm run build *)"]),
        ("git commit -m 'fix: x'", ["mcp__shell__exec(git commit *)"]),
        ("timeout 30 npm test", ["mcp__shell__exec(npm test *)"]),
        ("NODE_ENV=test npm test", ["mcp__shell__exec(npm test *)"]),
        ("rm -rf build", ["mcp__shell__exec(rm -rf build)"]),
        ("ls", ["mcp__shell__exec(ls)"]),
        ("git status && npm test", ["mcp__shell__exec(git status *)", "mcp__shell__exec(npm test *)"]),
        ("cargo test | tee log", ["mcp__shell__exec(cargo test *)", "mcp__shell__exec(tee log)"]),
        ("ls *.py", ["mcp__shell__exec(ls \\*.py)"]),
    ],
)
def test_shell_command_gives_one_space_form_rule_per_part(command, expected):
    assert narrow_rules_for(shell(command)) == expected


@pytest.mark.parametrize(
    "command",
    [
        "python -c 'import os'",
        "python3 -c 'print(1)'",
        "bash -c 'make'",
        "sh -c 'ls'",
        "node -e 'x'",
        "perl -e 'x'",
        "sudo python3 -c 'x'",
        "make && timeout 5 python -c 'x'",
        "eval ls",
    ],
)
def test_interpreter_with_inline_code_is_refused(command):
    assert narrow_rules_for(shell(command)) == []


@pytest.mark.parametrize("command", ['echo "unterminated', "echo hi\u200b", "echo " + "a" * 10_001, None])
def test_command_no_allow_rule_could_match_is_refused(command):
    assert narrow_rules_for(shell(command)) == []


@pytest.mark.parametrize(
    ("tool", "path", "expected"),
    [
        (WRITE, "notes.txt", "mcp__file__write_file(./notes.txt)"),
        (WRITE, "./notes.txt", "mcp__file__write_file(./notes.txt)"),
        (WRITE, "/repo/src/app.py", "mcp__file__write_file(src/app.py)"),
        (EDIT, "src/../lib/a*b?.py", "mcp__file__edit_file(lib/a\\*b\\?.py)"),
        (WRITE, "!x/y", "mcp__file__write_file(./!x/y)"),
        (WRITE, "/etc/motd", "mcp__file__write_file(//etc/motd)"),
        (READ, "../other/x", "mcp__file__read_file(//other/x)"),
    ],
)
def test_a_file_tool_gets_the_path_of_this_call_not_the_whole_tool(tool, path, expected):
    assert narrow_rules_for(call(tool, path=path, content="")) == [expected]


def test_a_file_rule_covers_that_path_and_no_other():
    [rule] = narrow_rules_for(call(WRITE, path="notes.txt", content=""))
    engine = PolicyEngine(rules(allow=[rule]))
    assert engine.evaluate(call(WRITE, path="notes.txt", content="x")).verdict == "allow"
    for other in ("other.txt", "sub/notes.txt", "notes.txt.bak"):
        assert engine.evaluate(call(WRITE, path=other, content="x")).verdict == "ask"
    [starred] = narrow_rules_for(call(WRITE, path="a*.txt", content=""))
    assert PolicyEngine(rules(allow=[starred])).evaluate(call(WRITE, path="ab.txt", content="")).verdict == "ask"


@pytest.mark.parametrize("path", [".", "/repo", "", None, "trailing space ", "new\nline"])
def test_a_file_call_no_path_rule_can_name_exactly_gets_none(path):
    arguments = {} if path is None else {"path": path}
    assert narrow_rules_for(call(WRITE, **arguments)) == []
    assert narrow_rules_for(call(LIST, **arguments)) == []


def test_another_tool_gets_its_one_argument_as_param_value():
    assert narrow_rules_for(call("mcp__github__get_issue", number=3)) == ["mcp__github__get_issue(number:3)"]
    assert narrow_rules_for(call("mcp__github__create_issue", repo="a/b")) == ["mcp__github__create_issue(repo:a/b)"]
    [rule] = narrow_rules_for(call("mcp__github__create_issue", repo="a/b"))
    engine = PolicyEngine(rules(allow=[rule]))
    assert engine.evaluate(call("mcp__github__create_issue", repo="a/b")).verdict == "allow"
    assert engine.evaluate(call("mcp__github__create_issue", repo="a/c")).verdict == "ask"


@pytest.mark.parametrize(
    "arguments",
    [{}, {"repo": "a/b", "title": "x"}, {"repo": "a/*"}, {"repo": ["a"]}, {"repo": " padded "}, {"a b": "x"}],
)
def test_another_tool_whose_call_one_param_rule_cannot_name_exactly_gets_none(arguments):
    assert narrow_rules_for(call("mcp__github__create_issue", **arguments)) == []


def test_parts_already_allowed_are_left_out():
    existing = rules(allow=["Bash(git status)"])
    assert narrow_rules_for(shell("git status && npm test"), rules=existing) == [
        "mcp__shell__exec(npm test *)"
    ]


def test_nested_commands_get_rules_too():
    assert narrow_rules_for(shell('echo "$(date)"')) == [
        'mcp__shell__exec(echo "$(date)")',
        "mcp__shell__exec(date)",
    ]


@pytest.mark.parametrize(
    "command",
    [
        "npm test",
        "git push origin main",
        "rm -rf build",
        "ls *.py && echo 'a  b'",
        "find . -name \\*.py",
        "timeout 5 make check",
        'echo "$(date)" | grep x',
    ],
)
def test_written_rules_allow_the_call_they_were_written_for(command):
    written = RuleSet.from_config({"allow": narrow_rules_for(shell(command))}, source="session")
    assert PolicyEngine(RuleSet()).evaluate(shell(command), session_rules=written).verdict == "allow"


def test_exact_rule_does_not_widen_to_other_arguments():
    written = RuleSet.from_config({"allow": narrow_rules_for(shell("rm -rf *"))}, source="session")
    engine = PolicyEngine(RuleSet())
    assert engine.evaluate(shell("rm -rf *"), session_rules=written).verdict == "allow"
    assert engine.evaluate(shell("rm -rf /"), session_rules=written).verdict == "ask"


def test_file_tool_rule_round_trips_for_its_path_only():
    written = RuleSet.from_config(
        {"allow": narrow_rules_for(call(WRITE, path="a", content=""))}, source="user"
    )
    engine = PolicyEngine(RuleSet())
    assert engine.evaluate(call(WRITE, path="a", content="x"), session_rules=written).verdict == "allow"
    assert engine.evaluate(call(WRITE, path="b", content=""), session_rules=written).verdict == "ask"
    assert engine.evaluate(call(READ, path="b"), session_rules=written).verdict == "allow"  # reads: their policy


def test_an_mcp_call_with_several_arguments_gets_one_rule_per_short_argument():
    send = call("mcp__mail__send", to="ops@example.com", body="hello", attempt=2, tags=["x"])
    assert argument_rules_for(send) == [
        "mcp__mail__send(to:ops@example.com)",
        "mcp__mail__send(body:hello)",
        "mcp__mail__send(attempt:2)",
    ]
    engine = PolicyEngine(rules(allow=["mcp__mail__send(to:ops@example.com)"]))
    assert engine.evaluate(call("mcp__mail__send", to="ops@example.com", body="other")).verdict == "allow"
    assert engine.evaluate(call("mcp__mail__send", to="drop@evil.example", body="hello")).verdict == "ask"


def test_argument_rules_leave_out_long_values_result_text_and_the_builtin_tools():
    send = call("mcp__mail__send", to="ops@example.com", body="x" * 500, note="a *glob*")
    assert argument_rules_for(send) == ["mcp__mail__send(to:ops@example.com)"]
    assert argument_rules_for(send, leave_out={"to"}) == []
    assert argument_rules_for(call("mcp__mail__send", to="ops@example.com")) == []  # narrow_rules_for's already
    assert argument_rules_for(call(WRITE, path="a.txt", content="x")) == []
    assert argument_rules_for(shell("echo hi")) == []
