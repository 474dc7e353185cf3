"""Which files changed, from the kernel: what the watch reports, when it says "look at everything",
and that snapshots taken through it are the very snapshots a full look takes."""

from __future__ import annotations

import os
import random
import subprocess
import threading
from pathlib import Path

import pytest

from backend.checkpoints import ShadowRepo
from backend.checkpoints import _watch
from backend.checkpoints._watch import FULL_EVERY_S, WorkspaceWatch


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watch_of(workspace: Path, clock: Clock | None = None, skip=lambda folder: folder == "node_modules") -> WorkspaceWatch:
    watch = WorkspaceWatch(workspace, skip=skip, clock=clock or Clock())
    assert watch.usable, "inotify is expected on this machine's local filesystem"
    assert watch.changed() is None  # the first look is always a full one
    return watch


def test_files_written_deleted_and_chmod_ed_are_reported_by_path_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "keep.txt").write_text("same")
    (tmp_path / "gone.txt").write_text("x")
    watch = watch_of(tmp_path)
    assert watch.changed() == set()
    (tmp_path / "src" / "new.py").write_text("print(1)\n")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "keep.txt").chmod(0o755)
    assert watch.changed() == {"src/new.py", "gone.txt", "keep.txt"}
    assert watch.changed() == set()  # each change is reported once
    watch.close()


def test_a_rename_reports_both_names(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    watch = watch_of(tmp_path)
    (tmp_path / "a.txt").rename(tmp_path / "b.txt")
    assert watch.changed() == {"a.txt", "b.txt"}
    watch.close()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda ws: (ws / "made").mkdir(), id="a folder made"),
        pytest.param(lambda ws: (ws / "sub").rmdir(), id="a folder removed"),
        pytest.param(lambda ws: (ws / "sub").rename(ws / "moved"), id="a folder moved"),
        pytest.param(lambda ws: (ws / ".gitignore").write_text("*.log\n"), id="an ignore file changed"),
        pytest.param(lambda ws: (ws / "sub" / ".git").write_text("gitdir: x\n"), id="a nested repository made"),
    ],
)
def test_a_change_that_may_touch_many_files_makes_the_next_look_a_full_one(tmp_path: Path, change) -> None:
    (tmp_path / "sub").mkdir()
    watch = watch_of(tmp_path)
    change(tmp_path)
    assert watch.changed() is None
    assert watch.changed() == set()  # watching again from there
    watch.close()


def test_a_folder_made_after_the_watch_started_is_watched_once_looked_at(tmp_path: Path) -> None:
    watch = watch_of(tmp_path)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    assert watch.changed() is None
    (tmp_path / "deep" / "er" / "f.txt").write_text("f")
    assert watch.changed() == {"deep/er/f.txt"}
    watch.close()


def test_skipped_folders_and_the_users_git_folder_are_not_watched(tmp_path: Path) -> None:
    (tmp_path / "node_modules").mkdir()
    (tmp_path / ".git").mkdir()
    watch = watch_of(tmp_path)
    (tmp_path / "node_modules" / "lib.js").write_text("x")
    (tmp_path / ".git" / "index").write_text("x")
    assert watch.changed() == set()
    watch.close()


def test_every_so_often_the_look_is_a_full_one_whatever_the_kernel_said(tmp_path: Path) -> None:
    clock = Clock()
    watch = watch_of(tmp_path, clock)
    clock.now += FULL_EVERY_S / 2
    assert watch.changed() == set()
    clock.now += FULL_EVERY_S
    assert watch.changed() is None
    assert watch.changed() == set()
    watch.close()


def test_a_filesystem_another_machine_may_write_is_never_watched(tmp_path: Path, monkeypatch) -> None:
    assert _watch.is_remote(tmp_path) is False
    monkeypatch.setattr(_watch, "is_remote", lambda folder: True)
    watch = WorkspaceWatch(tmp_path, skip=lambda folder: False)
    (tmp_path / "a").write_text("a")
    assert watch.usable is False and watch.changed() is None and watch.changed() is None


def test_past_the_process_s_share_of_watches_the_least_recently_used_workspace_gives_its_watch_up(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(_watch, "MAX_WATCHES", 2)
    folders = [tmp_path / name for name in ("one", "two", "three")]
    watches = []
    for folder in folders:
        folder.mkdir()
        watches.append(watch_of(folder))
    first, second, third = watches
    assert (first.watching, second.watching, third.watching) == (False, True, True)
    (folders[0] / "f").write_text("f")
    assert first.changed() is None  # it lost its watch: a full look, and it watches again
    assert first.watching and not second.watching  # now the least recently used gave way
    (folders[0] / "g").write_text("g")
    assert first.changed() == {"g"}
    for watch in watches:
        watch.close()


def test_the_folders_watched_in_all_workspaces_stay_within_a_share_of_the_users_limit(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(_watch.WATCHES, "budget", 3)
    big, small = tmp_path / "big", tmp_path / "small"
    for name in "abcd":
        (big / name).mkdir(parents=True)
    small.mkdir()
    (small / "x").mkdir()
    watch_small = watch_of(small)  # two folders of three
    watch_big = WorkspaceWatch(big, skip=lambda folder: False)
    assert watch_big.changed() is None and not watch_big.watching  # five folders never fit
    assert watch_small.watching is False  # evicted while trying to make room, and told so by a full look
    assert watch_small.changed() is None and watch_small.changed() == set()
    watch_small.close()


def test_past_the_folder_limit_every_look_is_a_full_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_watch, "MAX_FOLDERS", 3)
    for name in "abcd":
        (tmp_path / name).mkdir()
    watch = WorkspaceWatch(tmp_path, skip=lambda folder: False)
    assert watch.changed() is None
    (tmp_path / "a" / "f").write_text("f")
    assert watch.changed() is None


def _random_change(workspace: Path, rng: random.Random) -> str:
    files = [p for p in workspace.rglob("*") if ".git" not in p.parts and p.is_file() and not p.is_symlink()]
    dirs = [workspace] + [p for p in workspace.rglob("*") if p.is_dir() and not p.is_symlink() and ".git" not in p.parts]
    kind = rng.choice(["write", "write", "write", "append", "delete", "chmod", "link", "rename", "mkdir", "rmtree", "ignore", "big", "shell"])
    folder = rng.choice(dirs)
    if kind == "write" or not files and kind in ("append", "delete", "chmod", "rename"):
        path = folder / f"f{rng.randrange(8)}.{rng.choice(['txt', 'log', 'py'])}"
        if path.is_dir():
            return "skip"
        path.write_bytes(os.urandom(rng.randrange(1, 200)))
    elif kind == "append":
        with rng.choice(files).open("ab") as f:
            f.write(b"more\n")
    elif kind == "delete":
        rng.choice(files).unlink()
    elif kind == "chmod":
        target = rng.choice(files)
        if not target.is_symlink():
            target.chmod(rng.choice([0o644, 0o755]))
    elif kind == "link":
        link = folder / f"l{rng.randrange(3)}"
        if not link.exists() and not link.is_symlink():
            link.symlink_to(rng.choice(["f1.txt", "../x", "nowhere"]))
    elif kind == "rename":
        source = rng.choice(files)
        target = rng.choice(dirs) / f"r{rng.randrange(5)}.txt"
        if not target.exists():
            source.rename(target)
    elif kind == "mkdir":
        (folder / f"d{rng.randrange(4)}").mkdir(exist_ok=True)
    elif kind == "rmtree" and folder != workspace:
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    elif kind == "ignore":
        (workspace / ".gitignore").write_text(rng.choice(["*.log\n", "", "d1/\n*.py\n"]))
    elif kind == "big":
        (folder / "big.bin").write_bytes(b"x" * rng.choice([10, 5000]))
    elif kind == "shell":
        subprocess.run("echo hi > s.txt; rm -f f1.txt; mkdir -p sh/x && echo y > sh/x/y", shell=True, cwd=folder, check=True)
    return kind


def _over_limit(skipped) -> list:
    return [s for s in skipped if not s.reason.startswith("ignored")]


@pytest.mark.parametrize("seed", range(6))
def test_snapshots_taken_through_the_watch_equal_those_of_a_full_look_after_random_changes(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "node_modules").mkdir()
    watched = ShadowRepo(workspace, root=tmp_path / "watched", max_file_bytes=1000)
    looking = ShadowRepo(workspace, root=tmp_path / "looking", max_file_bytes=1000, watch=False)
    looking.snapshot()
    # The reference takes git's way every time: the index's own tree, never the journal's.
    looking._stager._apply_few = lambda *changes: None  # type: ignore[union-attr]
    fast_looks = 0
    for step in range(120):
        kinds = [_random_change(workspace, rng) for _ in range(rng.randrange(1, 4))]
        fast = watched._stager is not None and watched._stager._watch.watching
        one = (watched.snapshot_if_small() if rng.random() < 0.5 else None) or watched.snapshot()
        two = looking.snapshot()
        watched.settle()  # git reads objects from its own store only
        watched.settle()  # git reads objects from its own store only
        tree_one = subprocess.run(["git", f"--git-dir={watched.git_dir}", "rev-parse", f"{one.commit}^{{tree}}"], capture_output=True, text=True).stdout
        tree_two = subprocess.run(["git", f"--git-dir={looking.git_dir}", "rev-parse", f"{two.commit}^{{tree}}"], capture_output=True, text=True).stdout
        assert tree_one == tree_two, f"step {step} after {kinds}"
        # What is left out for its size is said alike; which ignored files are named differs
        # (the full look names an ignored folder, not each file in it): a note, not the snapshot.
        assert _over_limit(one.skipped) == _over_limit(two.skipped), f"step {step} after {kinds}"
        assert all(s.reason.startswith("ignored") for s in set(one.skipped) ^ set(two.skipped))
        fast_looks += fast
    assert fast_looks > 40  # most of them went the kernel's way


def test_a_small_change_is_snapshotted_on_the_callers_thread_and_a_big_one_is_left_whole_for_a_worker(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a")
    shadow = ShadowRepo(workspace, root=tmp_path / "shadow")
    full = ShadowRepo(workspace, root=tmp_path / "full", watch=False)
    assert shadow.snapshot_if_small() is None  # nothing open yet: the worker opens it
    shadow.snapshot()
    (workspace / "a.txt").write_text("b")
    small = shadow.snapshot_if_small()
    assert small is not None and small.commit == full.snapshot().commit

    for i in range(20):  # more files than run inline; what peek read from the kernel is kept
        (workspace / f"many{i}.txt").write_text(str(i))
    assert shadow.snapshot_if_small() is None
    (workspace / "one-more.txt").write_text("x")
    assert shadow.snapshot_if_small() is None
    assert shadow.snapshot().commit == full.snapshot().commit

    (workspace / "big.bin").write_bytes(b"x" * 300_000)  # too many bytes to hash inline
    assert shadow.snapshot_if_small() is None
    assert shadow.snapshot().commit == full.snapshot().commit

    (workspace / "folder").mkdir()  # a full look: never inline
    (workspace / "folder" / "f").write_text("f")
    assert shadow.snapshot_if_small() is None
    assert shadow.snapshot().commit == full.snapshot().commit


@pytest.mark.parametrize("holder", ["another thread", "another process's lock"])
def test_a_snapshot_never_runs_inline_while_someone_else_holds_the_repository(tmp_path: Path, holder: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shadow = ShadowRepo(workspace, root=tmp_path / "shadow")
    shadow.snapshot()
    (workspace / "a.txt").write_text("a")
    held, release = threading.Event(), threading.Event()
    # Another ShadowRepo of the same repository has its own descriptor: its flock is what
    # another process's would be.
    lock = shadow._lock if holder == "another thread" else ShadowRepo(workspace, root=tmp_path / "shadow")._lock

    def hold() -> None:
        with lock.held():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    try:
        assert shadow.snapshot_if_small() is None
    finally:
        release.set()
        holder.join(30)
    assert shadow.snapshot_if_small() is not None
