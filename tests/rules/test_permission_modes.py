"""A pasted Claude Code `permissions` block with `defaultMode` and `additionalDirectories` loads
from overseer.yaml, and each mode means what backend/rules/permission_modes.py says (issue 35, item 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.agents import Agents
from backend.cli import main
from backend.app.policy import build_policy
from backend.app.policy_layers import effective_policy
from backend.config import ConfigError, PermissionsConfig, Settings, load_settings
from backend.rules.managed import ManagedPolicy
from backend.rules.permission_modes import ACCEPT_EDITS_SOURCE, session_mode
from tests.rules.support import EDIT, READ, SHELL, WRITE, call

PASTED = """\
permissions:
  allow: ["Bash(git status)"]
  deny: ["Read(./.env)"]
  defaultMode: {mode}
  additionalDirectories: ["../docs", "~/notes"]
  disableBypassPermissionsMode: disable
"""


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_a_pasted_block_with_default_mode_and_additional_directories_loads(config_dir, mode):
    (config_dir / "overseer.yaml").write_text(PASTED.format(mode=mode))
    settings = load_settings()
    assert settings.permissions.defaultMode == mode
    assert settings.permissions.allow == ["Bash(git status)"]
    # Relative folders are read from the config file's folder, `~` from home.
    assert settings.all_workspace_roots == [config_dir / "../docs", config_dir / Path("~/notes").expanduser()]


@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk", "auto"])
def test_a_mode_overseer_cannot_honour_safely_stops_the_start_saying_what_to_write_instead(config_dir, mode):
    (config_dir / "overseer.yaml").write_text(PASTED.format(mode=mode))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert f"defaultMode {mode!r} is refused" in str(info.value)
    assert "permissions.allow" in str(info.value) or "acceptEdits" in str(info.value)


def test_an_unknown_mode_is_refused_naming_the_field(config_dir):
    (config_dir / "overseer.yaml").write_text(PASTED.format(mode="yolo"))
    with pytest.raises(ConfigError, match="defaultMode"):
        load_settings()


def test_accept_edits_allows_writes_inside_the_workspace_and_nothing_else():
    engine = build_policy(PermissionsConfig(defaultMode="acceptEdits"), {}, read_only_auto_allow=False)
    inside = engine.evaluate(call(WRITE, path="src/app.py", content="x"))
    assert (inside.verdict, inside.rule, inside.source) == ("allow", "Edit(./**)", ACCEPT_EDITS_SOURCE)
    assert engine.evaluate(call(EDIT, path="README.md", old="a", new="b")).verdict == "allow"
    assert engine.evaluate(call(WRITE, path="/etc/passwd", content="x")).verdict == "ask"
    assert engine.evaluate(call(WRITE, path="../outside.txt", content="x")).verdict == "ask"
    assert engine.evaluate(call(SHELL, command="rm -rf build")).verdict == "ask"


def test_a_deny_rule_still_beats_accept_edits():
    permissions = PermissionsConfig(defaultMode="acceptEdits", deny=["Edit(./secrets/**)"])
    engine = build_policy(permissions, {}, read_only_auto_allow=False)
    assert engine.evaluate(call(WRITE, path="secrets/key", content="x")).verdict == "deny"


def test_accept_edits_is_not_applied_when_the_managed_policy_turns_auto_approve_off(caplog):
    managed = ManagedPolicy(disable_auto_approve=True, source="/etc/overseer/managed.yaml")
    engine = build_policy(PermissionsConfig(defaultMode="acceptEdits"), {}, read_only_auto_allow=False, managed=managed)
    assert engine.evaluate(call(WRITE, path="src/app.py", content="x")).verdict == "ask"
    assert "disable_auto_approve" in caplog.text


@pytest.mark.parametrize("mode", [None, "default", "plan"])
def test_default_and_plan_leave_rules_as_they_are(mode):
    engine = build_policy(PermissionsConfig(defaultMode=mode), {}, read_only_auto_allow=False)
    assert engine.evaluate(call(WRITE, path="src/app.py", content="x")).verdict == "ask"
    assert engine.evaluate(call(READ, path="src/app.py")).verdict != "deny"


def test_plan_makes_new_sessions_start_in_the_plan_mode():
    assert [session_mode(m) for m in (None, "default", "acceptEdits", "plan")] == ["agent", "agent", "agent", "plan"]


def test_the_config_file_keeps_only_the_settings_that_are_set():
    assert PermissionsConfig(allow=["Bash(ls)"]).as_written() == {"allow": ["Bash(ls)"], "ask": [], "deny": []}
    written = PermissionsConfig(defaultMode="plan", additionalDirectories=["../x"]).as_written()
    assert written["defaultMode"] == "plan" and written["additionalDirectories"] == ["../x"]


def test_an_agent_may_say_plan_and_the_host_wide_settings_are_refused_for_one_agent(tmp_path):
    def agents_with(permissions: dict) -> Agents:
        settings = Settings(data_dir=tmp_path / "data", workspace=tmp_path, agents=[{"id": "notes", "permissions": permissions}])
        return Agents.from_settings(settings, servers=["file"], modes=["agent", "plan"])

    assert agents_with({"defaultMode": "plan"}).get("notes").mode == "plan"
    assert agents_with({"defaultMode": "plan"}).get("notes").config.mode is None  # nothing written back
    for refused in ({"defaultMode": "acceptEdits"}, {"additionalDirectories": ["/srv"]}):
        with pytest.raises(ConfigError, match="top-level permissions block"):
            agents_with(refused)


def test_policy_show_lists_the_rule_accept_edits_stands_for_unless_the_managed_policy_turns_it_off(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", workspace=tmp_path, permissions={"defaultMode": "acceptEdits"})
    shown = [(e.layer, e.effect, e.text, e.where) for e in effective_policy(settings, ManagedPolicy()).entries]
    assert ("config", "allow", "Edit(./**)", f"environment ({ACCEPT_EDITS_SOURCE})") in shown
    locked = effective_policy(settings, ManagedPolicy(disable_auto_approve=True, source="/etc/m.yaml")).entries
    assert "Edit(./**)" not in [e.text for e in locked]


def test_rules_check_answers_as_the_host_would_for_a_pasted_accept_edits_block(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OVERSEER_WORKSPACE", raising=False)
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["../x"]}}))
    assert main(["rules", "check", WRITE, json.dumps({"path": "src/app.py", "content": "x"}), "--config", str(config)]) == 0
    verdict, reason = capsys.readouterr().out.strip().split("\t")
    assert verdict == "allow" and ACCEPT_EDITS_SOURCE in reason
