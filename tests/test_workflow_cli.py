"""`overseer workflow run|list`: steps followed in the terminal, gates asked there, exit status."""

from __future__ import annotations

import builtins
import json

import pytest

from backend.cli import main
from backend.testing import Reply, ScriptedModelServer

PLAN = "## Plan\n1. Write hello.txt"


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    ws = tmp_path / "workspace"
    ws.mkdir()
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(ws))
    monkeypatch.setenv("OVERSEER_BUILTIN_SERVERS", "false")
    monkeypatch.chdir(tmp_path)
    return ws


@pytest.fixture
def model(monkeypatch):
    with ScriptedModelServer() as server:
        monkeypatch.setenv("OVERSEER_MODEL", "openai/scripted")
        monkeypatch.setenv("OVERSEER_API_BASE", server.openai_base)
        monkeypatch.setenv("OVERSEER_API_KEY", "scripted")
        yield server


def answers(monkeypatch, *lines: str) -> list[str]:
    """Type `lines` at the terminal's prompts, in order; returns the prompts that were shown."""
    queue, shown = list(lines), []

    def fake_input(prompt: str = "") -> str:
        shown.append(prompt)
        if not queue:
            raise EOFError
        return queue.pop(0)

    monkeypatch.setattr(builtins, "input", fake_input)
    return shown


def test_a_gate_edited_in_the_terminal_gives_the_next_step_the_new_prompt(workspace, model, monkeypatch, capsys):
    model.push(Reply(text=PLAN), Reply(text="Wrote it."))
    shown = answers(monkeypatch, "e", "Write hello.txt and nothing else.")
    assert main(["workflow", "run", "plan-then-build", "--input", "Say hello"]) == 0
    assert model.requests[0].last_prompt() == "Say hello"
    assert model.requests[1].last_prompt() == "Write hello.txt and nothing else."
    out = capsys.readouterr().out
    assert "step 1/2 (plan)" in out and "step 2/2 (agent)" in out
    assert "Step 1 of 2 (plan) is done" in out and "1. Write hello.txt" in out
    assert "Wrote it." in out and "workflow completed" in out
    assert len(shown) == 2


def test_a_gate_denied_in_the_terminal_exits_non_zero_and_runs_no_next_step(workspace, model, monkeypatch, capsys):
    model.push(Reply(text=PLAN))
    answers(monkeypatch, "n", "Not this plan.")
    assert main(["workflow", "run", "plan-then-build", "--input", "Say hello"]) == 1
    assert len(model.requests) == 1
    assert "workflow denied: Not this plan." in capsys.readouterr().out


def test_an_unknown_workflow_is_an_error_exit(workspace, model, capsys):
    assert main(["workflow", "run", "nope", "--input", "x"]) == 2
    assert "no workflow named 'nope'" in capsys.readouterr().err
    assert model.requests == []


def test_workflow_list_shows_the_builtins_and_a_persons_own(workspace, tmp_path, capsys):
    folder = tmp_path / "data" / "workflows"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("name: mine\ndescription: Mine.\nsteps:\n  - mode: ask\n    prompt: '{{input}}'\n")
    assert main(["workflow", "list", "--json"]) == 0
    listed = {w["name"]: w["source"] for w in json.loads(capsys.readouterr().out)}
    assert listed == {"plan-then-build": "builtin", "research-then-write": "builtin", "mine": "user"}
