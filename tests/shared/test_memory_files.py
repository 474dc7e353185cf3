"""The memory file format (shared/memory_files.py): parsing, editing and writing MEMORY.md and HISTORY.md."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from shared import memory_files


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


HAND_WRITTEN = """# Memory

Notes about this project, kept by hand.

- Top-level fact without a heading

## Preferences

- Prefers tabs <!-- id:m000001 -->
* Likes short answers
  and concrete examples

```
- not a fact, inside a code block
```

## Project
- Uses PostgreSQL 16 <!-- id:m000002 -->
"""


def test_parse_memory_reads_sections_ids_and_continuation_lines() -> None:
    facts = memory_files.parse_memory(HAND_WRITTEN)
    assert [(f.section, f.text) for f in facts] == [
        ("General", "Top-level fact without a heading"),
        ("Preferences", "Prefers tabs"),
        ("Preferences", "Likes short answers and concrete examples"),
        ("Project", "Uses PostgreSQL 16"),
    ]
    assert facts[1].id == "m000001" and facts[3].id == "m000002"


def test_a_fact_without_an_id_gets_one_derived_from_its_text() -> None:
    first = memory_files.parse_memory("- Likes short answers\n")[0]
    again = memory_files.parse_memory("# Memory\n\n## Elsewhere\n\n- likes  short answers.\n")[0]
    assert first.id == again.id == memory_files.short_id("m", "Likes short answers")
    assert first.id.startswith("m") and len(first.id) == 7


def test_derived_ids_that_collide_are_lengthened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_files, "short_id", lambda prefix, text, length=6: prefix + "x" * length)
    facts = memory_files.parse_memory("- one\n- two\n")
    assert [f.id for f in facts] == ["mxxxxxx", "mxxxxxxx"]


def test_with_fact_creates_the_file_layout_from_nothing() -> None:
    text, saved = memory_files.with_fact("", "Prefers tabs", "General")
    assert saved.added and saved.section == "General"
    assert text == f"# Memory\n\n## General\n\n- Prefers tabs <!-- id:{saved.id} -->\n"


def test_with_fact_appends_to_the_end_of_an_existing_section_and_keeps_other_lines() -> None:
    text, saved = memory_files.with_fact(HAND_WRITTEN, "Reads diffs, not summaries", "preferences")
    lines = text.splitlines()
    assert saved.section == "Preferences"
    assert (
        lines[lines.index("  and concrete examples") + 1]
        == f"- Reads diffs, not summaries <!-- id:{saved.id} -->"
    )
    assert "- not a fact, inside a code block" in lines and "Notes about this project, kept by hand." in lines


def test_with_fact_adds_a_missing_section_at_the_end() -> None:
    text, saved = memory_files.with_fact(HAND_WRITTEN, "Deploys on Fridays are forbidden", "Rules")
    assert text.endswith(f"\n\n## Rules\n\n- Deploys on Fridays are forbidden <!-- id:{saved.id} -->\n")


def test_with_fact_fills_an_empty_section_under_its_heading() -> None:
    text, _ = memory_files.with_fact("# Memory\n\n## Empty\n\n## Next\n\n- other\n", "First one", "Empty")
    assert text.splitlines()[2:7] == ["## Empty", "", text.splitlines()[4], "", "## Next"]
    assert text.splitlines()[4].startswith("- First one <!-- id:")


def test_an_equal_fact_is_not_added_twice_in_any_section() -> None:
    text, saved = memory_files.with_fact(HAND_WRITTEN, "  prefers TABS. ", "Other")
    assert text == HAND_WRITTEN
    assert not saved.added and saved.id == "m000001" and saved.section == "Preferences"


def test_without_fact_removes_every_line_of_the_fact_only() -> None:
    derived = memory_files.parse_memory(HAND_WRITTEN)[2].id
    text, gone = memory_files.without_fact(HAND_WRITTEN, derived)
    assert [f.text for f in gone] == ["Likes short answers and concrete examples"]
    assert "Likes short answers" not in text and "concrete examples" not in text
    assert len(text.splitlines()) == len(HAND_WRITTEN.splitlines()) - 2


def test_without_an_unknown_id_changes_nothing() -> None:
    assert memory_files.without_fact(HAND_WRITTEN, "mnope00") == (HAND_WRITTEN, [])


@pytest.mark.parametrize("bad", ["", "   ", "- ", "sneaky <!-- id:m1 --> text", "ends -->"])
def test_clean_fact_refuses_empty_or_format_breaking_facts(bad: str) -> None:
    with pytest.raises(ValueError):
        memory_files.clean_fact(bad)


def test_clean_fact_makes_one_line_of_several() -> None:
    assert memory_files.clean_fact("- first line\n   second line ") == "first line second line"


def test_save_facts_writes_atomically_and_reports_duplicates(workspace: Path) -> None:
    first = memory_files.save_facts(workspace, [("Prefers tabs", None), ("Uses uv", "Tools")])
    second = memory_files.save_facts(workspace, [("prefers tabs", "Other")])
    assert [s.added for s in first] == [True, True] and not second[0].added
    assert second[0].id == first[0].id
    text = memory_files.memory_path(workspace).read_text()
    assert text.count("Prefers tabs") == 1 and "## Tools" in text
    assert list(memory_files.memory_path(workspace).parent.iterdir()) == [memory_files.memory_path(workspace)]


def test_save_facts_with_one_bad_fact_writes_none(workspace: Path) -> None:
    with pytest.raises(ValueError):
        memory_files.save_facts(workspace, [("good", None), ("", None)])
    assert not memory_files.memory_path(workspace).exists()


def test_forget_fact_returns_what_was_removed(workspace: Path) -> None:
    (saved,) = memory_files.save_facts(workspace, [("Temporary fact", None)])
    assert [f.text for f in memory_files.forget_fact(workspace, saved.id)] == ["Temporary fact"]
    assert memory_files.forget_fact(workspace, saved.id) == []
    assert "Temporary fact" not in memory_files.memory_path(workspace).read_text()


def test_history_is_appended_with_timestamp_headings(workspace: Path) -> None:
    memory_files.append_history(workspace, "We set up CI.", when=datetime(2025, 3, 1, 9, 30))
    memory_files.append_history(
        workspace, "We fixed the flaky test.\n\nIt was a race.", when=datetime(2025, 3, 2, 17, 5)
    )
    text = memory_files.history_path(workspace).read_text()
    assert text == (
        "# History\n\n## 2025-03-01 09:30\n\nWe set up CI.\n\n"
        "## 2025-03-02 17:05\n\nWe fixed the flaky test.\n\nIt was a race.\n"
    )
    entries = memory_files.parse_history(text)
    assert [(e.section, e.text) for e in entries] == [
        ("2025-03-01 09:30", "We set up CI."),
        ("2025-03-02 17:05", "We fixed the flaky test.\n\nIt was a race."),
    ]
    assert all(e.file == "HISTORY.md" and e.id.startswith("h") for e in entries)


def test_an_empty_history_entry_is_refused(workspace: Path) -> None:
    with pytest.raises(ValueError):
        memory_files.append_history(workspace, "  \n", when=datetime(2025, 3, 1))
    assert not memory_files.history_path(workspace).exists()


def test_reading_a_missing_memory_file_gives_empty_text(workspace: Path) -> None:
    assert memory_files.read_text(memory_files.memory_path(workspace)) == ""
