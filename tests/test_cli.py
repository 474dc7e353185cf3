"""`overseer` on the command line: run, approvals in the terminal, demo, rules check, servers."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys

import pytest

from backend.cli import main
from backend.domain.models import Approval, utcnow
from backend.terminal import TerminalUI
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import only_servers_env
from backend.testing.process import REPO

BOUND = 120  # seconds a whole `overseer` child may take; it ends by itself long before

# A server that cannot start, as one missing its token would: it says why on stderr and exits.
BROKEN_SERVER = {
    "command": sys.executable,
    "args": ["-c", "import sys; print('boom: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)"],
}


def overseer(args: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess[str]:
    """`overseer ARGS` as a real child process, run to its end (bounded)."""
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=BOUND,
    )  # fmt: skip


def with_broken_server(tmp_path, *keep: str) -> dict[str, str]:
    """An environment whose MCP servers are the built-ins `keep` and one that fails to start."""
    servers = json.loads(only_servers_env(*keep)["OVERSEER_MCP_SERVERS"]) | {"broken": BROKEN_SERVER}
    (tmp_path / "workspace").mkdir(exist_ok=True)
    return {
        **os.environ,
        "OVERSEER_DATA_DIR": str(tmp_path / "data"),
        "OVERSEER_WORKSPACE": str(tmp_path / "workspace"),
        "OVERSEER_MCP_SERVERS": json.dumps(servers),
    }


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    ws = tmp_path / "workspace"
    ws.mkdir()
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(ws))
    for name, value in only_servers_env("file", "shell").items():  # the servers the scripts call
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return ws


@pytest.fixture
def model(monkeypatch):
    with ScriptedModelServer() as server:
        monkeypatch.setenv("OVERSEER_MODEL", "openai/scripted")
        monkeypatch.setenv("OVERSEER_API_BASE", server.openai_base)
        monkeypatch.setenv("OVERSEER_API_KEY", "scripted")
        yield server


def write_call(path: str = "notes.txt") -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "hi\n"})])


def test_run_with_approve_all_allows_the_ask_and_exits_zero(workspace, model, capsys):
    model.push(write_call(), Reply(text="all done"))
    assert main(["run", "write notes", "--approve", "all"]) == 0
    assert (workspace / "notes.txt").read_text() == "hi\n"
    out = capsys.readouterr().out
    assert "all done" in out and "completed" in out


def test_approve_all_never_overrides_a_deny(workspace, model, tmp_path):
    (tmp_path / "overseer.yaml").write_text("permissions:\n  deny: ['Edit(notes.txt)']\n")
    assert main(["trust"]) == 0  # the folder's own config counts once a person trusted it
    model.push(write_call(), Reply(text="could not"))
    assert main(["run", "write notes", "--approve", "all"]) == 0
    assert not (workspace / "notes.txt").exists()


def test_approve_none_denies_every_ask(workspace, model):
    model.push(write_call(), Reply(text="denied, fine"))
    assert main(["run", "write notes", "--approve", "none"]) == 0
    assert not (workspace / "notes.txt").exists()
    assert "--approve none" in model.requests[-1].tool_results()[0].text


def test_json_mode_prints_one_event_per_line(workspace, model, capsys):
    model.push(Reply(text="hello there"))
    assert main(["run", "hi", "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "session.created" and "token" in types and types[-1] == "session.status"
    assert {e["session_id"] for e in events} == {events[0]["session_id"]}


def test_a_failed_session_exits_non_zero(workspace, model, capsys):
    model.push(*[Reply(status=400)] * 2)
    assert main(["run", "hi"]) == 1
    assert "error" in capsys.readouterr().out


def test_with_no_model_configured_the_demo_runs_offline_with_a_banner(workspace, capsys):
    assert main(["run", "show me around", "--approve", "all"]) == 0
    out = capsys.readouterr().out
    assert "Demo mode" in out
    assert (workspace / "notes.txt").exists()
    assert "mcp__shell__exec" in out and "completed" in out


def test_rules_check_prints_the_decision_and_the_rule_that_made_it(tmp_path, capsys):
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"permissions": {"allow": ["Bash"], "deny": ["Bash(rm *)"]}}))
    assert main(["rules", "check", "Bash", '{"command": "echo ok && rm -rf build"}', "--config", str(config)]) == 0
    verdict, reason = capsys.readouterr().out.strip().split("\t")
    assert verdict == "deny" and "Bash(rm *)" in reason


def test_rules_check_reads_dot_paths_in_the_workspace_overseer_workspace_names(workspace, tmp_path, capsys):
    # The working directory (tmp_path) is not the workspace: without OVERSEER_WORKSPACE honoured,
    # ./.env would mean tmp_path/.env and the deny rule would not cover the workspace's .env.
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    assert main(["rules", "check", "Read", json.dumps({"path": str(workspace / ".env")}), "--config", str(config)]) == 0
    verdict, reason = capsys.readouterr().out.strip().split("\t")
    assert verdict == "deny" and "Read(./.env)" in reason
    # --workspace still wins over the environment.
    assert main(["rules", "check", "Read", json.dumps({"path": str(workspace / ".env")}), "--config", str(config),
                 "--workspace", str(tmp_path)]) == 0  # fmt: skip
    assert capsys.readouterr().out.split("\t")[0] != "deny"


def test_rules_check_answers_as_the_host_does_for_overseers_own_folders_and_the_managed_policy(
    tmp_path, monkeypatch, capsys
):
    data = tmp_path / "home" / "data"
    data.mkdir(parents=True)
    (data / "overseer.db").write_text("")
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(data))
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(tmp_path / "home"))
    managed = tmp_path / "managed.yaml"
    managed.write_text("permissions:\n  deny: ['Bash(curl *)']\n")
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(managed))
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"permissions": {"allow": ["Read(./**)", "Bash"]}}))

    assert main(["rules", "check", "Read", json.dumps({"path": str(data / "overseer.db")}), "--config", str(config)]) == 0
    verdict, reason = capsys.readouterr().out.strip().split("\t")
    assert verdict == "deny" and "Overseer's own data" in reason
    assert main(["rules", "check", "Bash", '{"command": "curl example.org"}', "--config", str(config)]) == 0
    verdict, reason = capsys.readouterr().out.strip().split("\t")
    assert verdict == "deny" and "Bash(curl *)" in reason
    assert main(["rules", "check", "Read", json.dumps({"path": str(tmp_path / "home" / "notes.txt")}), "--config", str(config)]) == 0
    assert capsys.readouterr().out.split("\t")[0] == "allow"


@pytest.mark.parametrize(
    ("flags", "libraries_at"), [([], logging.WARNING), (["-v"], logging.WARNING), (["-vv"], logging.INFO)]
)
def test_third_party_loggers_stay_at_warning_unless_asked_with_vv(flags, libraries_at, monkeypatch):
    monkeypatch.setattr(logging.getLogger("LiteLLM"), "level", logging.NOTSET)
    monkeypatch.setattr(logging.getLogger("httpx"), "level", logging.NOTSET)
    root = logging.getLogger()
    monkeypatch.setattr(root, "level", root.level)
    assert main([*flags, "rules", "check", "Bash", "{nope"]) == 2
    assert logging.getLogger("LiteLLM").getEffectiveLevel() == libraries_at
    assert logging.getLogger("httpx").getEffectiveLevel() == libraries_at
    # LiteLLM's per-call INFO line is dropped unless asked for.
    assert logging.getLogger("LiteLLM").isEnabledFor(logging.INFO) == (libraries_at == logging.INFO)


def test_rules_check_refuses_arguments_that_are_not_json(capsys):
    assert main(["rules", "check", "Bash", "{nope"]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_servers_lists_the_built_in_servers_and_their_tools(workspace, capsys):
    assert main(["servers", "--json"]) == 0
    listed = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert listed["file"]["state"] == listed["shell"]["state"] == "ready"
    assert "mcp__shell__exec" in [t["name"] for t in listed["shell"]["tools"]]
    assert (listed["shell"]["restarts"], listed["shell"]["last_restart"]) == (0, None)


def test_servers_exits_non_zero_when_an_enabled_server_fails_and_says_why_on_stderr(tmp_path):
    # Disabled built-ins are not listed and do not count; the one broken server does.
    done = overseer(["servers", "--json"], with_broken_server(tmp_path, "shell"), cwd=tmp_path)
    assert done.returncode == 1
    states = {s["name"]: s["state"] for s in json.loads(done.stdout)}
    assert states == {"shell": "ready", "broken": "error"}
    assert "'broken'" in done.stderr and "boom: GITHUB_TOKEN is not set" in done.stderr


def test_run_reports_a_server_that_failed_to_start_once_on_stderr_and_as_an_event(tmp_path):
    with ScriptedModelServer([Reply(text="done without it")]) as model:
        env = with_broken_server(tmp_path) | {
            "OVERSEER_MODEL": "openai/scripted", "OVERSEER_API_BASE": model.openai_base, "OVERSEER_API_KEY": "x",
        }  # fmt: skip
        done = overseer(["run", "hi", "--json"], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [e["data"] for e in events if e["type"] == "server.failed"]
    assert [f["server"] for f in failed] == ["broken"]
    assert "boom: GITHUB_TOKEN is not set" in failed[0]["error"]
    assert done.stderr.count("boom: GITHUB_TOKEN is not set") == 1
    assert "'broken'" in done.stderr


def test_the_first_command_to_run_makes_the_data_dir_and_its_logs_owner_only(workspace, tmp_path, capsys):
    # `overseer servers` before anything else used to leave the data dir 0755 and logs 0644.
    old_umask = os.umask(0o022)
    try:
        assert main(["servers", "--json"]) == 0
    finally:
        os.umask(old_umask)
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == stat.S_IMODE((data / "logs").stat().st_mode) == 0o700
    logs = list((data / "logs").iterdir())
    assert logs and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in logs)


def test_a_broken_config_is_a_clear_error_and_exit_2(workspace, tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "overseer.yaml").write_text("max_iterations: lots\n")
    assert main(["run", "hi"]) == 2
    assert "max_iterations" in capsys.readouterr().err


def approval() -> Approval:
    return Approval(
        id="a1", session_id="s", tool_call_id="c", tool_name="mcp__shell__exec",
        arguments={"command": "npm test"}, suggested_rules=["mcp__shell__exec(npm test *)"], expires_at=utcnow(),
    )


async def ask_with(answers: list[str]):
    lines = iter(answers)
    ui = TerminalUI(host=None, read_line=lambda prompt: next(lines), out=open("/dev/null", "w"))  # type: ignore[arg-type]
    return await ui.ask(approval())


async def test_terminal_deny_carries_the_typed_reason():
    decision = await ask_with(["n", "use staging"])
    assert (decision.kind, decision.message) == ("deny", "use staging")


async def test_terminal_edit_rejects_bad_json_then_takes_the_edited_arguments():
    decision = await ask_with(["e", "{bad", "e", '{"command": "npm test -- --ci"}'])
    assert decision.updated_arguments == {"command": "npm test -- --ci"}


async def test_terminal_always_uses_the_suggested_narrow_rule():
    decision = await ask_with(["a"])
    assert (decision.kind, decision.rules) == ("allow_always", ["mcp__shell__exec(npm test *)"])


async def test_terminal_treats_a_closed_stdin_as_deny():
    def closed(prompt: str) -> str:
        raise EOFError

    ui = TerminalUI(host=None, read_line=closed, out=open("/dev/null", "w"))  # type: ignore[arg-type]
    assert (await ui.ask(approval())).kind == "deny"


def test_run_in_the_terminal_can_invoke_a_sub_agent_and_answers_its_approval(workspace, model, monkeypatch, capsys):
    for name, value in only_servers_env("file", "shell", "invoke_agent").items():
        monkeypatch.setenv(name, value)
    model.push(
        Reply(tool_calls=[ScriptedToolCall(name="mcp__invoke_agent__invoke_agent", arguments={"prompt": "write notes"})]),
        write_call(),
        Reply(text="child wrote them"),
        Reply(text="parent done"),
    )
    assert main(["run", "delegate", "--approve", "all"]) == 0
    assert (workspace / "notes.txt").read_text() == "hi\n"
    out = capsys.readouterr().out
    assert "↳ sub-agent" in out
    assert "  │ → mcp__file__write_file" in out
    assert "  │ child wrote them" in out
    assert "parent done" in out


def test_run_in_plan_mode_asks_to_switch_and_carries_out_the_edited_plan(workspace, model, monkeypatch, capsys):
    monkeypatch.setenv("OVERSEER_BUILTIN_SERVERS", "false")
    answers = iter(["e", "1. Say hello politely"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    model.push(Reply(text="## Plan\n1. Say hello"), Reply(text="hello, politely"))
    assert main(["run", "greet", "--mode", "plan"]) == 0
    out = capsys.readouterr().out
    assert "Switch to agent mode and carry out this plan?" in out and "1. Say hello" in out
    carry_out = model.requests[1]
    assert "1. Say hello politely" in carry_out.last_prompt() and "Mode: agent" in (carry_out.system or "")


def test_run_refuses_an_unknown_mode_with_exit_2_and_leaves_no_session(workspace, model, capsys):
    assert main(["run", "hi", "--mode", "nope"]) == 2
    assert "unknown mode 'nope'" in capsys.readouterr().err
    assert model.requests == []


def test_run_attaches_a_skill_named_at_the_start_of_the_task(workspace, model, monkeypatch, tmp_path):
    monkeypatch.setenv("OVERSEER_BUILTIN_SERVERS", "false")
    skill = tmp_path / "data" / "skills" / "greeting"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeting\ndescription: How we greet\n---\nAlways wave.\n")
    model.push(Reply(text="*waves*"))
    assert main(["run", "/greeting say hi"]) == 0
    prompt = model.requests[0].last_prompt()
    assert prompt.startswith("say hi") and "Always wave." in prompt


async def test_terminal_gate_edit_replaces_the_plan_and_keeps_the_mode():
    lines = iter(["e", "1. Only the docs"])
    ui = TerminalUI(host=None, read_line=lambda prompt: next(lines), out=open("/dev/null", "w"))  # type: ignore[arg-type]
    gate = approval().model_copy(
        update={"kind": "mode_switch", "tool_name": "switch_mode", "arguments": {"mode": "agent", "plan": "1. All"}}
    )
    decision = await ui.ask(gate)
    assert decision.updated_arguments == {"mode": "agent", "plan": "1. Only the docs"}


def test_run_with_an_agent_works_in_that_agents_workspace_with_its_model(workspace, model, monkeypatch, tmp_path):
    monkeypatch.setenv("OVERSEER_AGENTS", json.dumps([{"id": "reviewer", "model": "openai/reviewer-model"}]))
    model.push(write_call(), Reply(text="written"))
    assert main(["run", "write notes", "--agent", "reviewer", "--approve", "all"]) == 0
    assert (tmp_path / "data" / "agents" / "reviewer" / "workspace" / "notes.txt").read_text() == "hi\n"
    assert not (workspace / "notes.txt").exists()
    assert {r.model for r in model.requests} == {"reviewer-model"}


def test_run_refuses_an_unknown_agent_with_exit_2_naming_the_agents_there_are(workspace, model, capsys):
    assert main(["run", "hi", "--agent", "ghost"]) == 2
    assert "no agent 'ghost' is configured (agents: main)" in capsys.readouterr().err
    assert model.requests == []


# --- overseer trust ----------------------------------------------------------------------------

# What an agent with one write approval put in the folder `overseer` runs in (issue 29, item 6).
ALLOWS_WRITES = "permissions:\n  allow: [mcp__file__write_file]\n"


def test_a_folders_config_counts_only_after_overseer_trust_and_until_it_changes(workspace, model, tmp_path, caplog, capsys):
    config = tmp_path / "overseer.yaml"
    config.write_text(ALLOWS_WRITES)
    model.push(write_call(), Reply(text="asked, denied"))
    with caplog.at_level(logging.WARNING):
        assert main(["run", "write notes", "--approve", "none"]) == 0
    assert not (workspace / "notes.txt").exists()  # the allow rule was not loaded: it asked
    assert str(config) in caplog.text and "overseer trust" in caplog.text

    assert main(["trust"]) == 0
    shown = capsys.readouterr().out
    assert ALLOWS_WRITES.strip() in shown and str(config) in shown
    model.push(write_call(), Reply(text="written"))
    assert main(["run", "write notes", "--approve", "none"]) == 0
    assert (workspace / "notes.txt").read_text() == "hi\n"  # trusted: the allow rule ran it unasked

    (workspace / "notes.txt").unlink()
    config.write_text(ALLOWS_WRITES + " ")  # one byte more
    model.push(write_call(), Reply(text="asked again"))
    assert main(["run", "write notes", "--approve", "none"]) == 0
    assert not (workspace / "notes.txt").exists()


def test_overseer_trust_lists_what_is_trusted_and_revokes_it(workspace, tmp_path, capsys):
    (tmp_path / "overseer.yaml").write_text("max_iterations: 5\n")
    skill = tmp_path / ".overseer" / "skills" / "house"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: House rules.\nalways: true\n---\nBe kind.\n")
    assert main(["trust", str(tmp_path)]) == 0
    assert "house/SKILL.md" in capsys.readouterr().out
    assert main(["trust", "--list"]) == 0
    listed = capsys.readouterr().out
    states = [line.split()[0] for line in listed.splitlines()]
    assert states == ["trusted", "trusted"] and str(tmp_path / ".overseer" / "skills") in listed

    (skill / "SKILL.md").write_text("---\ndescription: House rules.\nalways: true\n---\nObey.\n")
    assert main(["trust", "--list"]) == 0
    assert sorted(line.split()[0] for line in capsys.readouterr().out.splitlines()) == ["changed", "trusted"]

    assert main(["trust", "--revoke", str(tmp_path)]) == 0
    assert main(["trust", "--list"]) == 0
    assert "Nothing is trusted." in capsys.readouterr().out
    assert main(["trust", "--revoke", str(tmp_path)]) == 1


def test_overseer_rewind_restores_before_the_last_step_or_a_named_one_and_prints_what_it_restored(workspace, model, capsys):
    (workspace / "notes.txt").write_text("mine\n")
    model.push(write_call(), write_call("extra.txt"), Reply(text="done"))
    assert main(["run", "write notes", "--approve", "all", "--json"]) == 0
    session_id = json.loads(capsys.readouterr().out.splitlines()[0])["session_id"]
    assert (workspace / "notes.txt").read_text() == "hi\n" and (workspace / "extra.txt").exists()

    assert main(["rewind", session_id]) == 0  # before the last step: extra.txt was not there
    out = capsys.readouterr().out
    assert "before step 2 (mcp__file__write_file)" in out and "  extra.txt" in out
    assert f"To undo this rewind: overseer rewind {session_id} 3" in out
    assert not (workspace / "extra.txt").exists() and (workspace / "notes.txt").read_text() == "hi\n"

    assert main(["rewind", session_id, "1", "--files", "notes.txt"]) == 0
    assert "  notes.txt" in capsys.readouterr().out
    assert (workspace / "notes.txt").read_text() == "mine\n"

    assert main(["rewind", session_id, "3"]) == 0  # undoes the first rewind
    assert (workspace / "extra.txt").read_text() == "hi\n" and (workspace / "notes.txt").read_text() == "hi\n"


def test_overseer_rewind_says_why_it_cannot(workspace, model, capsys):
    assert main(["rewind", "nope"]) == 1
    assert "overseer rewind: " in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["rewind", "nope", "0"])
    assert refused.value.code == 2
    assert "steps are numbered from 1" in capsys.readouterr().err
