"""The built-in layer above every rule: the file tools never reach Overseer's own folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.rules.grammar import RuleSet
from backend.rules.own_data import SOURCE, OwnDataGuard
from backend.rules.policy_engine import PolicyEngine

from .support import EDIT, GLOB, LIST, READ, WRITE, call, rules

GREP = "mcp__file__grep"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace that holds the data dir `.overseer` (a home folder as the workspace)."""
    root = tmp_path.resolve()
    (root / ".overseer" / "checkpoints").mkdir(parents=True)
    (root / ".overseer" / "skills").mkdir()
    (root / ".overseer" / "overseer.db").write_text("db")
    (root / "project").mkdir()
    return root


def engine(home: Path, *, allow: list[str], managed: RuleSet | None = None) -> PolicyEngine:
    guard = OwnDataGuard.of(
        data_dir=home / ".overseer",
        checkpoints_dir=home / ".overseer" / "checkpoints",
        read_roots=[home / ".overseer" / "skills"],
    )
    return PolicyEngine(rules(allow=allow), managed=managed, own_data=guard)


@pytest.mark.parametrize(
    ("name", "arguments", "which"),
    [
        (READ, {"path": ".overseer/overseer.db"}, "data dir"),
        (READ, {"path": "project/../.overseer/overseer.db"}, "data dir"),
        (READ, {"path": "{home}/.overseer/overseer.db"}, "data dir"),
        (READ, {"path": "link/overseer.db"}, "data dir"),
        (LIST, {"path": ".overseer/checkpoints"}, "checkpoints dir"),
        (GREP, {"pattern": "token", "path": ".overseer"}, "data dir"),
        (GLOB, {"pattern": "**", "path": "link"}, "data dir"),
        (WRITE, {"path": ".overseer/checkpoints/ws/HEAD", "content": "x"}, "checkpoints dir"),
        (EDIT, {"path": ".overseer/overseer.db", "old_text": "a", "new_text": "b"}, "data dir"),
        (WRITE, {"path": ".overseer/skills/x/SKILL.md", "content": "x"}, "data dir"),
    ],
)
def test_a_file_tool_reaching_an_own_folder_is_denied_whatever_the_rules_allow(
    home: Path, name: str, arguments: dict, which: str
) -> None:
    os.symlink(home / ".overseer", home / "link")
    arguments = {k: v.format(home=home) for k, v in arguments.items()}
    verdict = engine(home, allow=["Read(./**)", "Edit(./**)", "mcp__file"]).evaluate(call(name, home, **arguments))
    assert (verdict.verdict, verdict.source, verdict.rule) == ("deny", SOURCE, None)
    assert verdict.reason.startswith(f"'{arguments['path']}' is Overseer's own data (its {which}, ")
    assert verdict.reason.endswith("never open to tools")


def test_the_layer_comes_before_the_managed_one(home: Path) -> None:
    managed = RuleSet.from_config({"ask": ["Read(./**)"]}, source="managed")
    verdict = engine(home, allow=[], managed=managed).evaluate(call(READ, home, path=".overseer/overseer.db"))
    assert (verdict.verdict, verdict.source) == ("deny", SOURCE)


def test_the_workspaces_own_files_and_the_skill_folder_are_judged_by_the_rules(home: Path) -> None:
    checked = engine(home, allow=["Read(./**)", "Edit(./**)"])
    assert checked.evaluate(call(READ, home, path="project/main.py")).verdict == "allow"
    assert checked.evaluate(call(WRITE, home, path="notes.md", content="x")).verdict == "allow"
    assert checked.evaluate(call(LIST, home)).verdict == "allow"  # the listing leaves the folder out
    skill = checked.evaluate(call(READ, home, path=str(home / ".overseer" / "skills" / "SKILL.md")))
    assert skill.source != SOURCE


def test_a_named_agents_workspace_inside_the_data_dir_is_its_own(home: Path) -> None:
    bob = home / ".overseer" / "agents" / "bob" / "workspace"
    bob.mkdir(parents=True)
    checked = engine(home, allow=["Read(./**)"])
    assert checked.evaluate(call(READ, bob, path="todo.md")).verdict == "allow"
    assert checked.evaluate(call(READ, bob, path="../../../overseer.db")).source == SOURCE


def test_search_results_naming_an_own_folder_are_hidden(home: Path) -> None:
    checked = engine(home, allow=[])
    assert checked.hides(".overseer/overseer.db", home)
    assert checked.hides(str(home / ".overseer" / "checkpoints" / "ws" / "HEAD"), home)
    assert not checked.hides("project/main.py", home)


def test_an_engine_with_more_rules_keeps_the_layer(home: Path) -> None:
    wider = engine(home, allow=[]).with_rules(rules(allow=["Read"]))
    assert wider.evaluate(call(READ, home, path=".overseer/overseer.db")).source == SOURCE


def test_other_tools_are_not_judged_by_it(home: Path) -> None:
    verdict = engine(home, allow=["mcp__memory"]).evaluate(call("mcp__memory__memory_read", home, which="memory"))
    assert verdict.verdict == "allow"
