"""Workflow definitions on disk (backend/workflows/files.py): built-ins, overrides, validation, rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.modes.model import UnknownMode
from backend.workflows.files import (
    UnknownWorkflow,
    WorkflowError,
    WorkflowLibrary,
    check_modes,
    render_prompt,
)

GOOD = """\
name: {name}
description: mine
steps:
  - mode: ask
    prompt: "Look at {{{{input}}}}"
    approve: true
  - mode: agent
    prompt: "Do {{{{previous}}}}"
"""


class FakeModes:
    """A mode registry that knows only some names."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def get(self, name: str) -> str:
        if name not in self.names:
            raise UnknownMode(name, sorted(self.names))
        return name


@pytest.fixture
def user_dir(tmp_path) -> Path:
    folder = tmp_path / "workflows"
    folder.mkdir()
    return folder


def test_the_builtin_workflows_load_with_a_gate_after_their_first_step(user_dir):
    library = WorkflowLibrary(user_dir=user_dir)
    workflows = {w.name: w for w in library.list()}
    assert set(workflows) == {"plan-then-build", "research-then-write"}
    plan = workflows["plan-then-build"]
    assert [(s.mode, s.approve) for s in plan.steps] == [("plan", True), ("agent", False)]
    assert "{{previous}}" in plan.steps[1].prompt and plan.source == "builtin"
    research = workflows["research-then-write"]
    assert [(s.mode, s.approve) for s in research.steps] == [("research", True), ("agent", False)]


def test_the_builtin_workflows_name_only_modes_that_ship_with_overseer(user_dir):
    from backend.modes.registry import ModeRegistry
    from backend.paths import BUILTIN_MODES_DIR

    modes = ModeRegistry(BUILTIN_MODES_DIR, user_dir.parent / "modes")
    for workflow in WorkflowLibrary(user_dir=user_dir).list():
        check_modes(workflow, modes)


def test_a_persons_file_overrides_the_builtin_of_the_same_name(user_dir):
    (user_dir / "plan-then-build.yaml").write_text(GOOD.format(name="plan-then-build"))
    library = WorkflowLibrary(user_dir=user_dir)
    mine = library.get("plan-then-build")
    assert (mine.source, mine.description, [s.mode for s in mine.steps]) == ("user", "mine", ["ask", "agent"])
    assert [w.source for w in library.list() if w.name == "plan-then-build"] == ["user"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name: broken\nsteps: [unclosed\n", "not valid YAML"),
        ("name: broken\ndescription: no steps\n", "has no steps"),
        ("name: broken\nsteps: []\n", "steps"),
        ("name: broken\nsteps:\n  - mode: agent\n    prompt: 'Do {{task}}'\n", "{{task}}"),
        ("name: broken\nsteps:\n  - mode: agent\n    prompt: 'Redo {{previous}}'\n", "no step before it"),
        ("name: broken\nsteps:\n  - mode: agent\n    promt: typo\n", "promt"),
        ("name: other\nsteps:\n  - mode: agent\n    prompt: p\n", "must match the file name"),
        ("name: broken\nstep:\n  - mode: agent\n    prompt: p\n", "unknown key(s) step"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_a_broken_file_is_a_clear_error_naming_the_file(user_dir, text, words):
    path = user_dir / "broken.yaml"
    path.write_text(text)
    library = WorkflowLibrary(user_dir=user_dir)
    with pytest.raises(WorkflowError) as raised:
        library.get("broken")
    assert str(path) in str(raised.value) and words in str(raised.value)
    # The broken file is left out of the list; the others are still there.
    assert "broken" not in [w.name for w in library.list()]
    assert "plan-then-build" in [w.name for w in library.list()]


def test_a_step_naming_an_unknown_mode_is_reported_with_the_file_and_step(user_dir):
    (user_dir / "mine.yaml").write_text(GOOD.format(name="mine"))
    library = WorkflowLibrary(user_dir=user_dir)
    with pytest.raises(WorkflowError) as raised:
        library.get("mine", modes=FakeModes("agent"))
    assert str(user_dir / "mine.yaml") in str(raised.value) and "step 1" in str(raised.value)
    assert "'ask'" in str(raised.value)
    assert library.get("mine", modes=FakeModes("agent", "ask")).name == "mine"


def test_an_unknown_name_or_a_path_is_not_a_workflow(user_dir):
    library = WorkflowLibrary(user_dir=user_dir)
    for name in ("nope", "../plan-then-build", "/etc/passwd"):
        with pytest.raises(UnknownWorkflow):
            library.get(name)


def test_render_fills_input_and_previous_once_without_rereading_what_they_bring():
    rendered = render_prompt("Task: {{ input }}\nPlan: {{previous}}", input="x {{previous}}", previous="1. {{input}}")
    assert rendered == "Task: x {{previous}}\nPlan: 1. {{input}}"
    assert render_prompt("Just {{input}}", input="this", previous=None) == "Just this"
