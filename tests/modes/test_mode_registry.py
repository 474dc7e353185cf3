"""ModeRegistry: built-ins and a person's files, overrides and resets, hand edits and broken files."""

from __future__ import annotations

import logging
import shutil

import pytest

from backend.modes.model import InvalidMode, ModeWrite, UnknownMode
from backend.modes.registry import BUILTIN_ORDER, ModeRegistry
from backend.paths import BUILTIN_MODES_DIR


@pytest.fixture
def builtin_dir(tmp_path):
    """A copy of the shipped modes, so a test can never touch the real ones."""
    folder = tmp_path / "builtin"
    folder.mkdir()
    for path in BUILTIN_MODES_DIR.glob("*.md"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture
def user_dir(tmp_path):
    return tmp_path / "data" / "modes"


@pytest.fixture
def registry(builtin_dir, user_dir):
    return ModeRegistry(builtin_dir, user_dir)


def names(registry: ModeRegistry) -> list[str]:
    return [mode.name for mode in registry.list()]


def test_built_ins_come_first_in_their_fixed_order_then_a_person_s_modes_by_name(registry, builtin_dir):
    (builtin_dir / "zz-extra.md").write_text("Shipped later.\n", encoding="utf-8")
    registry.save("zeta", ModeWrite(prompt="z"))
    registry.save("alpha", ModeWrite(prompt="a"))
    assert names(registry) == [*BUILTIN_ORDER, "alpha", "zeta", "zz-extra"]
    assert {m.name: m.source for m in registry.list()}["alpha"] == "user"


def test_no_user_folder_means_the_built_ins_alone(registry, user_dir):
    assert not user_dir.exists()
    assert names(registry) == list(BUILTIN_ORDER)


def test_a_person_s_mode_overrides_the_built_in_of_the_same_name(registry):
    shipped = registry.get("plan")
    mine = registry.save("plan", ModeWrite(tools=["mcp__file__read_file"], prompt="My own plan mode."))
    assert (mine.source, mine.overrides_builtin, mine.prompt) == ("user", True, "My own plan mode.")
    assert registry.get("plan") == mine
    assert [m for m in registry.list() if m.name == "plan"] == [mine]
    assert registry.builtin("plan") == shipped


def test_deleting_an_override_resets_the_built_in(registry, user_dir):
    shipped = registry.get("ask")
    registry.save("ask", ModeWrite(prompt="Mine."))
    assert registry.delete("ask") == shipped
    assert registry.get("ask") == shipped
    assert not (user_dir / "ask.md").exists()


def test_a_person_s_mode_is_created_read_replaced_and_deleted_through_its_file(
    registry, builtin_dir, user_dir
):
    body = ModeWrite(
        description="Sorts issues",
        tools=["mcp__github", "read-only"],
        policies={"mcp__github__close_issue": "deny"},
        default_folder="~/work",
        next_mode="agent",
        icon="🧭",
        prompt="Sort the issues by severity.",
    )
    saved = registry.save("triage", body)
    assert (user_dir / "triage.md").is_file()
    assert saved.model_dump(include=set(ModeWrite.model_fields)) == body.model_dump()
    assert (saved.source, saved.overrides_builtin) == ("user", False)
    assert ModeRegistry(builtin_dir, user_dir).get("triage") == saved

    replaced = registry.save("triage", ModeWrite(prompt="Shorter."))
    assert (replaced.tools, replaced.policies, replaced.prompt) == ("all", {}, "Shorter.")
    assert registry.get("triage") == replaced

    assert registry.delete("triage") is None
    assert not (user_dir / "triage.md").exists()
    with pytest.raises(UnknownMode):
        registry.get("triage")


def test_a_hand_edited_file_is_picked_up_without_a_restart(registry, user_dir):
    user_dir.mkdir(parents=True)
    path = user_dir / "notes.md"
    path.write_text("---\ndescription: First\ntools: [read-only]\n---\nTake notes.\n", encoding="utf-8")
    assert registry.get("notes").description == "First"
    assert "notes" in names(registry)
    path.write_text("---\ndescription: Second\n---\nTake better notes.\n", encoding="utf-8")
    again = registry.get("notes")
    assert (again.description, again.tools, again.prompt) == ("Second", "all", "Take better notes.")
    path.unlink()
    assert "notes" not in names(registry)


def test_a_broken_file_is_skipped_by_list_but_reported_by_get(registry, user_dir, caplog):
    user_dir.mkdir(parents=True)
    broken = user_dir / "broken.md"
    broken.write_text("---\ntools: [nope]\n---\nx\n", encoding="utf-8")
    (user_dir / "unclosed.md").write_text("---\ndescription: x\n", encoding="utf-8")
    registry.save("fine", ModeWrite(prompt="ok"))
    with caplog.at_level(logging.WARNING, logger="backend.modes.registry"):
        assert names(registry) == [*BUILTIN_ORDER, "fine"]
        assert names(registry) == [*BUILTIN_ORDER, "fine"]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and any(str(broken) in message for message in warned)
    with pytest.raises(InvalidMode) as caught:
        registry.get("broken")
    assert str(broken) in str(caught.value) and "tools" in str(caught.value)


def test_a_broken_override_does_not_fall_back_quietly_to_the_built_in(registry, user_dir):
    user_dir.mkdir(parents=True)
    (user_dir / "plan.md").write_text("---\nname: not-plan\n---\nx\n", encoding="utf-8")
    assert "plan" not in names(registry)
    with pytest.raises(InvalidMode):
        registry.get("plan")
    assert registry.delete("plan") == registry.builtin("plan")
    assert registry.get("plan").source == "builtin"


def test_files_that_are_not_modes_are_ignored(registry, builtin_dir, user_dir):
    user_dir.mkdir(parents=True)
    (user_dir / "README.txt").write_text("notes", encoding="utf-8")
    (user_dir / ".draft.md").write_text("draft", encoding="utf-8")
    (user_dir / "folder.md").mkdir()
    (builtin_dir / "workflows").mkdir()
    (builtin_dir / "workflows" / "release.md").write_text("a workflow", encoding="utf-8")
    assert names(registry) == list(BUILTIN_ORDER)


def test_a_file_named_unlike_a_mode_is_skipped_and_its_name_reported(registry, user_dir):
    user_dir.mkdir(parents=True)
    (user_dir / "My Mode.md").write_text("x", encoding="utf-8")
    assert names(registry) == list(BUILTIN_ORDER)
    with pytest.raises(InvalidMode):
        registry.get("My Mode")


def test_next_mode_must_name_an_existing_mode(registry, user_dir):
    with pytest.raises(InvalidMode) as caught:
        registry.save("draft", ModeWrite(next_mode="nowhere"))
    assert str(caught.value).startswith("next_mode")
    assert not (user_dir / "draft.md").exists()
    registry.save("finish", ModeWrite(prompt="Finish it."))
    assert registry.save("draft", ModeWrite(next_mode="finish")).next_mode == "finish"
    assert registry.save("start", ModeWrite(next_mode="review")).next_mode == "review"


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("Bad Name", ModeWrite()),
        ("../escape", ModeWrite()),
        ("fine", ModeWrite(tools=["nope"])),
        ("fine", ModeWrite(policies={"shell": "deny"})),
    ],
)
def test_save_checks_everything_before_writing(registry, tmp_path, name, body):
    with pytest.raises(InvalidMode):
        registry.save(name, body)
    assert [p for p in tmp_path.rglob("*") if p.is_file() and "builtin" not in p.parts] == []


def test_a_built_in_without_an_override_cannot_be_deleted(registry, builtin_dir):
    with pytest.raises(InvalidMode):
        registry.delete("plan")
    assert (builtin_dir / "plan.md").is_file()


def test_an_unknown_name_is_unknown_to_get_and_delete_and_not_a_built_in(registry):
    for action in (registry.get, registry.delete):
        with pytest.raises(UnknownMode) as caught:
            action("nope")
        assert caught.value.name == "nope"
    assert registry.builtin("nope") is None
    registry.save("mine", ModeWrite())
    assert registry.builtin("mine") is None
