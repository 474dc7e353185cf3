"""`overseer policy show` names each rule's layer; `--approve all` is refused where the managed policy says so."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from backend.cli import main
from backend.domain.models import Approval, Decision, utcnow
from backend.rules.managed import MANAGED_PREFIX, ManagedPolicy
from backend.terminal import TerminalUI


@pytest.fixture
def layered(tmp_path, monkeypatch):
    """A managed file, a config file, an "always allow" kept for a workspace, and a data dir."""
    managed = tmp_path / "managed.yaml"
    managed.write_text(
        "permissions:\n  deny: ['Bash(curl *)']\n  ask: ['mcp__github']\n"
        "disable_allow_always: true\ndisable_approve_all: true\n"
        "allowed_mcp_servers: [github]\n"
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: lint.sh}]\n"
    )
    config = tmp_path / "overseer.yaml"
    config.write_text(
        "permissions:\n  allow: ['Bash(git status)']\n  deny: ['Read(.env)']\npolicies:\n  mcp__github__create_issue: ask\n"
    )
    data = tmp_path / "data"
    data.mkdir()
    (data / "always_rules.json").write_text(json.dumps({"workspace": {"/srv/app": ["Bash(npm test)"]}, "agent": {}}))
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(managed))
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    return {"managed": managed, "config": config, "data": data}


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.startswith("  ")]


def test_policy_show_prints_each_rule_with_the_layer_it_comes_from(layered, capsys):
    assert main(["--data-dir", str(layered["data"]), "policy", "show"]) == 0
    out = capsys.readouterr().out
    managed, config = str(layered["managed"]), str(layered["config"])
    found = rows(out)
    assert ["managed", "deny", "Bash(curl", "*)", managed, "[locked]"] in found
    assert ["managed", "ask", "mcp__github", managed, "[locked]"] in found
    assert ["config", "allow", "Bash(git", "status)", config] in found
    assert ["config", "deny", "Read(.env)", config] in found
    assert ["always-rules", "allow", "Bash(npm", "test)", "workspace", "/srv/app", "(always_rules.json)"] in found
    assert ["config", "ask", "mcp__github__create_issue", config] in found
    assert ["default", "always_allow", "mcp__file__read_file", "built", "in"] in found
    assert any(r[:2] == ["mode", "deny"] or r[0] == "mode" for r in found)  # the built-in modes' own policies
    assert f"Managed policy: {managed}" in out
    assert "switches on: disable_allow_always, disable_approve_all" in out
    assert "allowed MCP servers: name github" in out and "hooks for: PreToolUse" in out


def test_policy_show_as_json_keeps_the_layer_of_every_entry(layered, capsys):
    assert main(["--data-dir", str(layered["data"]), "policy", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["managed"] == str(layered["managed"])
    layers = {(e["layer"], e["effect"], e["text"]) for e in shown["entries"]}
    assert {("managed", "deny", "Bash(curl *)"), ("config", "allow", "Bash(git status)")} <= layers
    assert all(e["locked"] == (e["layer"] == "managed") for e in shown["entries"])


def test_policy_show_says_when_there_is_no_managed_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(tmp_path / "none.yaml"))
    monkeypatch.delenv("OVERSEER_CONFIG", raising=False)
    assert main(["--data-dir", str(tmp_path / "data"), "policy", "show"]) == 0
    out = capsys.readouterr().out
    assert f"Managed policy: none ({tmp_path / 'none.yaml'} does not exist)" in out
    assert not any(r[0] == "managed" for r in rows(out))


def test_approve_all_is_refused_with_the_managed_setting_named(layered, capsys):
    assert main(["--data-dir", str(layered["data"]), "run", "--approve", "all", "say hi"]) == 2
    err = capsys.readouterr().err
    assert f"--approve all is turned off: locked by managed policy ({layered['managed']}: disable_approve_all)" in err


def test_a_malformed_managed_file_stops_policy_show_with_the_reason(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "managed.yaml"
    bad.write_text("disable_allow_always: perhaps\n")
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(bad))
    assert main(["--data-dir", str(tmp_path / "data"), "policy", "show"]) == 2
    assert f"managed policy {bad} is invalid" in capsys.readouterr().err


class _Door:
    """The approval door as the terminal calls it: remembers each answer."""

    def __init__(self) -> None:
        self.answers: list[Decision] = []

    async def answer(self, approval_id: str, decision: Decision, **_: object) -> None:
        self.answers.append(decision)


def _terminal(managed: ManagedPolicy, answers: list[str], approve: str = "ask") -> tuple[TerminalUI, _Door, io.StringIO]:
    door, out, lines = _Door(), io.StringIO(), iter(answers)
    host = SimpleNamespace(managed=managed, approvals=door)
    ui = TerminalUI(host=host, approve=approve, read_line=lambda prompt: next(lines), out=out)  # type: ignore[arg-type]
    return ui, door, out


def _asked(reason: str) -> Approval:
    return Approval(
        id="a1", session_id="s", tool_call_id="c", tool_name="mcp__shell__exec", arguments={"command": "echo hi"},
        suggested_rules=["mcp__shell__exec(echo hi)"], reason=reason, expires_at=utcnow(),
    )


async def test_the_terminal_refuses_always_when_the_managed_policy_turns_it_off():
    managed = ManagedPolicy(disable_allow_always=True, source="/etc/overseer/managed.yaml")
    ui, door, out = _terminal(managed, ["a", "y"])
    await ui.answer(_asked("Running commands asks by default"))
    assert [d.kind for d in door.answers] == ["allow_once"]
    assert '"always allow" is turned off: locked by managed policy (/etc/overseer/managed.yaml: disable_allow_always)' in out.getvalue()


async def test_approve_all_leaves_a_managed_ask_to_the_person():
    ui, door, out = _terminal(ManagedPolicy(), ["n", ""], approve="all")
    await ui.answer(_asked(MANAGED_PREFIX + "ask rule mcp__github (managed)"))
    assert [d.kind for d in door.answers] == ["deny"]
    assert "--approve all does not cover a call the managed policy puts to a person" in out.getvalue()
    ui, door, _ = _terminal(ManagedPolicy(), [], approve="all")
    await ui.answer(_asked("Running commands asks by default"))
    assert [(d.kind, d.message) for d in door.answers] == [("allow_once", "--approve all")]
