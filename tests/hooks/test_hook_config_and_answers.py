"""The `hooks` block as configured, and handler runs read as Claude Code reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.approvals.hook_answers import Verdict, read_answer
from backend.approvals.hook_runner import HandlerRun, run_handler
from backend.approvals.hook_tools import hook_tool_input, tool_arguments
from backend.cli import main
from backend.domain.hook_config import CommandHook, HookMatcherGroup, HooksConfig, merge_hooks


def test_matchers_take_exact_names_alternatives_regexes_and_everything() -> None:
    assert HookMatcherGroup(matcher="Bash").matches("Bash", "mcp__shell__exec")
    assert not HookMatcherGroup(matcher="Bash").matches("Write", "mcp__file__write_file")
    assert HookMatcherGroup(matcher="Edit|Write").matches("Write", "mcp__file__write_file")
    assert HookMatcherGroup(matcher="mcp__file__.*").matches("Write", "mcp__file__write_file")
    assert not HookMatcherGroup(matcher="mcp__mem.*").matches("Write", "mcp__file__write_file")
    assert HookMatcherGroup(matcher="").matches("anything") and HookMatcherGroup(matcher="*").matches("x")


def test_a_handler_type_overseer_cannot_run_is_refused_and_an_unknown_event_loads() -> None:
    with pytest.raises(ValidationError):
        HooksConfig.model_validate({"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "is it safe?"}]}]})
    with pytest.raises(ValidationError):
        HooksConfig.model_validate({"PreToolUse": [{"matcher": "(", "hooks": []}]})
    config = HooksConfig.model_validate({"SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}]})
    assert config.groups("Stop") == []


def test_merged_hook_lists_keep_every_group_in_order() -> None:
    first = HooksConfig.model_validate({"PreToolUse": [{"matcher": "Bash", "hooks": []}]})
    second = HooksConfig.model_validate({"PreToolUse": [{"matcher": "Write", "hooks": []}], "Stop": [{"hooks": []}]})
    merged = merge_hooks(first, None, second)
    assert [g.matcher for g in merged.groups("PreToolUse")] == ["Bash", "Write"] and len(merged.groups("Stop")) == 1


def run(code: int | None, stdout: str = "", stderr: str = "", failure: str | None = None) -> HandlerRun:
    return HandlerRun(principal="hook:x", exit_code=code, stdout=stdout, stderr=stderr, failure=failure)


def test_exit_2_blocks_with_stderr_other_codes_fail_and_json_is_read_on_exit_0() -> None:
    blocked = read_answer(run(2, stderr="no rm\n"))
    assert blocked.blocked and blocked.reason == "no rm"
    assert read_answer(run(1, stderr="Traceback\nKeyError: 'x'")).failure == "exit code 1: KeyError: 'x'"
    ask = read_answer(run(0, '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}}'))
    assert (ask.permission, ask.reason, ask.blocked) == ("ask", "sure?", False)
    block = read_answer(run(0, '{"decision": "block", "reason": "fix lint"}'))
    assert block.blocked and block.reason == "fix lint"
    halt = read_answer(run(0, '{"continue": false, "stopReason": "enough"}'))
    assert halt.halted and halt.reason == "enough"
    assert read_answer(run(0, "plain words\n")).context == "plain words"


def test_a_failure_blocks_only_where_the_event_fails_closed_and_deny_beats_ask_beats_allow() -> None:
    failed = read_answer(run(None, failure="timed out after 1s"))
    assert Verdict(answers=[failed], fail_closed=True).blocked
    assert not Verdict(answers=[failed]).blocked
    allow = read_answer(run(0, '{"hookSpecificOutput": {"permissionDecision": "allow"}}'))
    ask = read_answer(run(0, '{"hookSpecificOutput": {"permissionDecision": "ask"}}'))
    assert Verdict(answers=[allow, ask]).permission == "ask"
    assert Verdict(answers=[allow, ask, read_answer(run(2))]).permission == "deny"


def test_file_tools_are_shown_to_hooks_with_claude_codes_names_and_come_back_as_ours() -> None:
    ws = Path("/ws")
    shown = hook_tool_input("mcp__file__edit_file", {"path": "a/b.txt", "old_text": "x", "new_text": "y"}, ws)
    assert shown == {"file_path": "/ws/a/b.txt", "old_string": "x", "new_string": "y"}
    back = tool_arguments("mcp__file__edit_file", {**shown, "new_string": "z"}, ws)
    assert back == {"path": "a/b.txt", "old_text": "x", "new_text": "z"}
    assert hook_tool_input("mcp__shell__exec", {"command": "ls", "timeout": 5}, ws) == {"command": "ls", "timeout": 5000}


def test_rules_check_names_the_hooks_a_pasted_settings_json_runs_for_the_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "permissions": {"deny": ["Bash(rm *)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]},
                           {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
            "PostToolUse": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/log"}]}],
        },
    }))
    assert main(["rules", "check", "Bash", '{"command": "rm -rf build"}', "--config", str(settings)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deny\t")
    assert lines[1:] == ["hook\tPreToolUse: hook:lint.sh", "hook\tPostToolUse: hook:http://127.0.0.1:9/log"]


async def test_a_hook_command_gets_the_event_on_stdin_and_none_of_the_hosts_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OVERSEER_TOKEN", "host-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "provider-secret")
    script = "import json, os, sys; print(json.dumps({'event': json.load(sys.stdin), 'env': dict(os.environ)}))"
    hook = CommandHook(type="command", command=f"python3 -c \"{script}\"")
    run = await run_handler(hook, {"hook_event_name": "Stop"}, cwd=tmp_path, env={"CLAUDE_PROJECT_DIR": str(tmp_path)})
    seen = json.loads(run.stdout)
    assert seen["event"] == {"hook_event_name": "Stop"} and seen["env"]["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert "OVERSEER_TOKEN" not in seen["env"] and "ANTHROPIC_API_KEY" not in seen["env"]
