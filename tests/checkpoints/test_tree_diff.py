"""What a step changed, as a person reads it (issue 33, item 8): moves, deletions and overwrites
with exact line counts, from the shadow repository's trees (backend/checkpoints/_tree_diff.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from backend.checkpoints import FileChange, ShadowRepo

SIX = "".join(f"old line {n}\n" for n in range(1, 7))
"""An overwrite's old content: six lines, none of which the new content keeps."""


def sh(command: str, cwd: Path) -> None:
    subprocess.run(command, shell=True, cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    (folder / "docs").mkdir(parents=True)
    (folder / "draft.md").write_text("# Draft\n\nThe plan, in three parts.\nOne.\nTwo.\nThree.\n")
    (folder / "docs/old.txt").write_text("to be removed\nand gone\n")
    (folder / "report.txt").write_text(SIX)
    return folder


@pytest.fixture
def shadow(workspace: Path, tmp_path: Path) -> ShadowRepo:
    return ShadowRepo(workspace, root=tmp_path / "checkpoints")


def by_path(changes: list[FileChange]) -> dict[str, FileChange]:
    return {change.path: change for change in changes}


def test_a_shell_step_that_moves_deletes_and_overwrites_reads_as_a_move_a_deletion_and_plus_3_minus_6(workspace, shadow):
    before = shadow.snapshot()
    sh("mv draft.md docs/plan.md && rm docs/old.txt && printf 'new 1\\nnew 2\\nnew 3\\n' > report.txt", workspace)
    after = shadow.snapshot()

    changes = shadow.changes(before.commit, after.commit)

    assert [(c.path, c.status, c.old_path) for c in changes] == [
        ("docs/old.txt", "deleted", None),
        ("docs/plan.md", "renamed", "draft.md"),
        ("report.txt", "modified", None),
    ]
    found = by_path(changes)
    moved = found["docs/plan.md"]
    assert (moved.similarity, moved.added, moved.removed) == (100, 0, 0)
    assert "rename from draft.md\nrename to docs/plan.md\n" in moved.diff
    gone = found["docs/old.txt"]
    assert (gone.added, gone.removed) == (0, 2)
    assert "-to be removed\n-and gone\n" in gone.diff
    overwritten = found["report.txt"]
    assert (overwritten.added, overwritten.removed) == (3, 6)
    assert "+new 3\n" in overwritten.diff and "-old line 6\n" in overwritten.diff


def test_a_file_moved_and_edited_is_a_rename_with_its_similarity_and_its_own_diff(workspace, shadow):
    before = shadow.snapshot()
    sh("mv draft.md plan.md && printf 'Four.\\n' >> plan.md", workspace)

    (moved,) = shadow.changes(before.commit)  # against the workspace now

    assert (moved.path, moved.status, moved.old_path) == ("plan.md", "renamed", "draft.md")
    assert moved.similarity is not None and 50 <= moved.similarity < 100
    assert (moved.added, moved.removed) == (1, 0)
    assert "+Four.\n" in moved.diff


def test_a_deleted_file_and_an_unlike_new_one_stay_a_deletion_and_an_addition(workspace, shadow):
    before = shadow.snapshot()
    sh("rm docs/old.txt && printf 'nothing alike\\n' > fresh.txt", workspace)

    changes = shadow.changes(before.commit)

    assert [(c.path, c.status, c.old_path, c.added, c.removed) for c in changes] == [
        ("docs/old.txt", "deleted", None, 0, 2),
        ("fresh.txt", "added", None, 1, 0),
    ]


def test_lines_that_look_like_patch_headers_are_counted_as_content(workspace, shadow):
    before = shadow.snapshot()
    (workspace / "report.txt").write_text("--- not a header\n+++ nor this\n")

    (change,) = shadow.changes(before.commit)

    assert (change.added, change.removed) == (2, 6)


def test_a_binary_file_has_no_line_counts(workspace, shadow):
    before = shadow.snapshot()
    (workspace / "blob.bin").write_bytes(b"\0\1\2\3")

    (change,) = shadow.changes(before.commit)

    assert (change.status, change.binary, change.diff, change.added, change.removed) == ("added", True, "", 0, 0)


def test_a_restore_still_sees_a_move_as_two_paths_and_puts_the_file_back(workspace, shadow):
    before = shadow.snapshot()
    sh("mv draft.md docs/plan.md", workspace)

    touched = shadow.restore(before.commit)

    assert touched == ["docs/plan.md", "draft.md"]
    assert (workspace / "draft.md").read_text().startswith("# Draft\n")
    assert not (workspace / "docs/plan.md").exists()
