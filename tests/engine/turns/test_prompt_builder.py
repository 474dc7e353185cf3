"""The composed system prompt (backend/engine/turns/prompt.py, bootstrap.py, turn.py) against golden files.

Set OVERSEER_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change, then read the diff.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backend.domain.models import Session
from backend.domain.tools import ToolInfo
from backend.engine.turns.bootstrap import MAX_BOOTSTRAP_CHARS, read_bootstrap_files
from backend.engine.turns.prompt import BootstrapFile, PromptParts, build_system_prompt
from backend.engine.turns.turn import prepare_turn
from backend.modes.registry import ModeRegistry
from backend.paths import BUILTIN_MODES_DIR
from backend.skills.catalog import SkillCatalog

GOLDEN = Path(__file__).parent / "golden"
NOW = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("OVERSEER_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; rerun with OVERSEER_UPDATE_GOLDEN=1 if intended"


def write_skill(folder: Path, name: str, description: str, *, always: bool = False, body: str = "Steps.") -> None:
    (folder / name).mkdir(parents=True)
    front = f"---\nname: {name}\ndescription: {description}\n" + ("always: true\n" if always else "") + "---\n"
    (folder / name / "SKILL.md").write_text(front + body + "\n", encoding="utf-8")


def tool(name: str, *, read_only: bool) -> ToolInfo:
    server, _, short = name.removeprefix("mcp__").partition("__")
    return ToolInfo.model_validate(
        {"name": name, "server": server, "tool": short, "annotations": {"readOnlyHint": read_only}}
    )


TOOLS = [tool("mcp__file__read_file", read_only=True), tool("mcp__file__write_file", read_only=False)]


def test_the_minimal_prompt_is_identity_date_and_workspace() -> None:
    prompt = build_system_prompt(PromptParts(workspace=Path("/work/space"), now=NOW))
    assert_golden("minimal_prompt.txt", prompt)


def test_every_part_appears_once_and_in_the_documented_order() -> None:
    parts = PromptParts(
        workspace=Path("/work/space"),
        now=NOW,
        agent_name="Ada",
        bootstrap=[
            BootstrapFile(name="AGENTS.md", path=Path("/work/space/AGENTS.md"), text="Run make test before done."),
            BootstrapFile(name="USER.md", path=Path("/data/USER.md"), text="The person prefers metric units."),
        ],
        memory="- [m1] The project ships on Fridays.",
        always_skills='These skills are always on.\n\n<skill name="tone">Be brief.</skill>',
        skills_summary="<available_skills>...</available_skills>",
        mode_name="plan",
        mode_prompt="Investigate, then plan.",
        session_instructions="Only touch the docs folder.",
    )
    prompt = build_system_prompt(parts)
    assert_golden("full_prompt.txt", prompt)
    markers = [
        "You are Ada",
        "Current date and time: 2026-12-02 09:30 UTC",
        "Workspace: /work/space",
        'file="AGENTS.md"',
        'file="USER.md"',
        "Long-term memory",
        "These skills are always on",
        "<available_skills>",
        "Mode: plan",
        "Instructions for this session:\nOnly touch the docs folder.",
    ]
    positions = [prompt.index(m) for m in markers]
    assert positions == sorted(positions)
    assert prompt.endswith("Only touch the docs folder.")


def test_a_workspace_bootstrap_file_wins_over_the_data_dir_one(tmp_path: Path) -> None:
    workspace, data = tmp_path / "ws", tmp_path / "data"
    workspace.mkdir(), data.mkdir()
    (workspace / "AGENTS.md").write_text("workspace agents", encoding="utf-8")
    (data / "AGENTS.md").write_text("data agents", encoding="utf-8")
    (data / "SOUL.md").write_text("data soul", encoding="utf-8")
    found = read_bootstrap_files(workspace, data)
    assert [(f.name, f.text) for f in found] == [("AGENTS.md", "workspace agents"), ("SOUL.md", "data soul")]


def test_a_huge_bootstrap_file_is_cut_with_a_note_saying_where_the_rest_is(tmp_path: Path) -> None:
    (tmp_path / "TOOLS.md").write_text("x" * (MAX_BOOTSTRAP_CHARS + 10), encoding="utf-8")
    [found] = read_bootstrap_files(tmp_path, tmp_path / "none")
    assert len(found.text) < MAX_BOOTSTRAP_CHARS + 200
    assert f"read {tmp_path / 'TOOLS.md'} for the rest" in found.text


async def test_a_turn_composes_mode_skills_bootstrap_and_memory_read_afresh(tmp_path: Path) -> None:
    workspace, data = tmp_path / "ws", tmp_path / "data"
    (workspace / "memory").mkdir(parents=True)
    write_skill(data / "skills", "tone", "House tone", always=True, body="Write in plain words.")
    write_skill(tmp_path / "builtin-skills", "summarize", "Summarize a text")
    (workspace / "SOUL.md").write_text("You are patient.", encoding="utf-8")
    (workspace / "memory" / "MEMORY.md").write_text("- [m1] Ships on Fridays\n", encoding="utf-8")
    modes = ModeRegistry(BUILTIN_MODES_DIR, data / "modes")
    skills = SkillCatalog(tmp_path / "builtin-skills", data / "skills")
    session = Session(id="s1", workspace=str(workspace), mode="ask", instructions="Answer in French.")

    turn = await prepare_turn(session, modes=modes, skills=skills, data_dir=data, all_tools=TOOLS, now=NOW)

    prompt = turn.system_prompt
    assert "You are patient." in prompt and "Ships on Fridays" in prompt
    assert "Write in plain words." in prompt  # the always-on skill, whole
    assert "<available_skills>" in prompt and "summarize" in prompt
    assert "Mode: ask" in prompt and prompt.endswith("Answer in French.")
    assert [t.name for t in turn.tools] == ["mcp__file__read_file"]
    assert turn.gate_session.offered == frozenset({"mcp__file__read_file"})

    (workspace / "SOUL.md").write_text("You are brisk.", encoding="utf-8")
    again = await prepare_turn(session, modes=modes, skills=skills, data_dir=data, all_tools=TOOLS, now=NOW)
    assert "You are brisk." in again.system_prompt and "You are patient." not in again.system_prompt


async def test_a_session_whose_mode_was_deleted_cannot_start_a_turn(tmp_path: Path) -> None:
    modes = ModeRegistry(BUILTIN_MODES_DIR, tmp_path / "modes")
    skills = SkillCatalog(tmp_path / "none", tmp_path / "skills")
    session = Session(id="s1", workspace=str(tmp_path), mode="gone")
    with pytest.raises(LookupError, match="unknown mode 'gone'"):
        await prepare_turn(session, modes=modes, skills=skills, data_dir=tmp_path, all_tools=TOOLS, now=NOW)
