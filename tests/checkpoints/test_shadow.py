"""The shadow repository: snapshots of a workspace, restored byte for byte, beside the user's own git."""

from __future__ import annotations

import hashlib
import os
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.checkpoints import ShadowRepo, Skipped, UnknownCommit
from backend.checkpoints import _git
from backend.checkpoints._git import BUILT_IN_IGNORED, TEMP_SUFFIX, GitError


def state(workspace: Path) -> dict[str, tuple[str, bytes]]:
    """Every file of the workspace but `.git`: its kind and mode, and its bytes (a link's target)."""
    found = {}
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d != ".git" or Path(folder) != workspace]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder, name)
            info = path.lstat()
            relative = path.relative_to(workspace).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path).encode())
            else:
                found[relative] = (oct(info.st_mode & 0o777), path.read_bytes())
    return found


def folders(workspace: Path) -> set[str]:
    return {
        Path(folder).relative_to(workspace).as_posix()
        for folder, _dirs, _files in os.walk(workspace)
        if ".git" not in Path(folder).relative_to(workspace).parts
    }


def sh(command: str, cwd: Path) -> str:
    return subprocess.run(command, shell=True, cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    sh(
        "mkdir -p src docs && printf 'print(1)\\n' > src/app.py && printf '#!/bin/sh\\necho hi\\n' > run.sh"
        " && chmod +x run.sh && printf 'old notes\\n' > docs/notes.md && ln -s src/app.py app-link"
        " && printf '\\000\\001\\002binary' > blob.bin",
        folder,
    )
    return folder


@pytest.fixture
def shadow(workspace: Path, tmp_path: Path) -> ShadowRepo:
    return ShadowRepo(workspace, root=tmp_path / "checkpoints")


def test_a_shell_command_that_edits_creates_deletes_and_makes_a_folder_is_restored_exactly(workspace, shadow):
    before = state(workspace)
    before_folders = folders(workspace)
    snapshot = shadow.snapshot()

    sh(
        "printf 'print(2)\\n' >> src/app.py && rm docs/notes.md && chmod -x run.sh && chmod +x src/app.py"
        " && mkdir -p build/out/deep && printf 'made' > build/out/deep/x.o && printf 'new' > new.txt"
        " && rm app-link && ln -s run.sh app-link && printf '\\377\\376' > blob.bin",
        workspace,
    )
    assert state(workspace) != before

    touched = shadow.restore(snapshot.commit)

    assert state(workspace) == before
    assert folders(workspace) == before_folders  # the untracked folder the command made is gone
    assert touched == sorted(
        ["app-link", "blob.bin", "build/out/deep/x.o", "docs/notes.md", "new.txt", "run.sh", "src/app.py"]
    )


def test_restoring_a_file_replaced_by_a_folder_and_a_folder_replaced_by_a_file(workspace, shadow):
    before = state(workspace)
    snapshot = shadow.snapshot()
    sh("rm -r docs && printf 'now a file' > docs && rm run.sh && mkdir -p run.sh/inner && printf x > run.sh/inner/f", workspace)

    shadow.restore(snapshot.commit)

    assert state(workspace) == before


def test_line_endings_filters_and_odd_file_names_come_back_byte_for_byte(workspace, shadow):
    sh(
        "printf '* text=auto eol=crlf\\n*.txt filter=nope ident\\n' > .gitattributes"
        " && printf 'unix\\nlines\\n' > a.txt && printf 'dos\\r\\nlines\\r\\n' > b.txt"
        " && printf '$Id$ mixed\\r\\n\\n' > c.txt && printf x > 'with space.txt' && printf y > \"$(printf 'new\\nline')\""
        " && printf z > 'ünïcödé.md'",
        workspace,
    )
    before = state(workspace)
    snapshot = shadow.snapshot()
    sh("for f in a.txt b.txt c.txt 'with space.txt' ünïcödé.md; do printf changed > \"$f\"; done; rm new*line", workspace)

    shadow.restore(snapshot.commit)

    assert state(workspace) == before


def test_the_users_own_git_repository_is_identical_after_snapshots_and_a_restore(workspace, shadow):
    sh(
        "git init -q -b main && git config user.email u@x && git config user.name U"
        " && git add -A && git commit -qm first && git branch feature"
        " && printf 'stashed\\n' >> docs/notes.md && git stash -q"
        " && printf 'staged\\n' >> src/app.py && git add src/app.py && printf 'untracked' > loose.txt"
        " && mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch \"$GIT_DIR/../HOOK-RAN\"\\n' > .git/hooks/pre-commit"
        " && chmod +x .git/hooks/pre-commit && cp .git/hooks/pre-commit .git/hooks/post-index-change",
        workspace,
    )

    def users_git() -> dict[str, object]:
        git = "git --no-optional-locks"
        return {
            "status": sh(f"{git} status --porcelain --untracked-files=all", workspace),
            "stash": sh(f"{git} stash list", workspace),
            "refs": sh(f"{git} rev-parse --all", workspace),
            "index": hashlib.sha256((workspace / ".git" / "index").read_bytes()).hexdigest(),
            "files": {p.as_posix(): p.read_bytes() for p in sorted((workspace / ".git").rglob("*")) if p.is_file()},
        }

    before = users_git()
    snapshot = shadow.snapshot()
    sh("printf 'edited' > src/app.py && rm loose.txt && printf n > added.txt", workspace)
    shadow.snapshot()
    shadow.restore(snapshot.commit)

    assert users_git() == before
    assert not (workspace / "HOOK-RAN").exists()
    assert ".git" not in {c.path.split("/")[0] for c in shadow.changes(snapshot.commit, None)}


def test_skipped_files_are_reported_and_left_alone_by_a_restore(workspace, tmp_path):
    shadow = ShadowRepo(workspace, root=tmp_path / "checkpoints", max_file_bytes=1024 * 1024)
    sh(
        "printf '*.log\\nbuild/\\n' > .gitignore && mkdir -p node_modules/pkg .venv/bin src/__pycache__ build"
        " && printf x > node_modules/pkg/index.js && printf x > .venv/bin/python && printf x > src/__pycache__/app.pyc"
        " && printf x > build/out && printf log > run.log && head -c 1048577 /dev/zero > big.dat",
        workspace,
    )
    snapshot = shadow.snapshot()

    assert set(snapshot.skipped) == {
        Skipped("node_modules", "ignored (node_modules)"),
        Skipped(".venv", "ignored (.venv)"),
        Skipped("src/__pycache__", "ignored (__pycache__)"),
        Skipped("build", "ignored (.gitignore)"),
        Skipped("run.log", "ignored (.gitignore)"),
        Skipped("big.dat", "over 1 MB"),
    }
    assert set(BUILT_IN_IGNORED) <= {s.reason[len("ignored (") : -1] for s in snapshot.skipped}

    sh("printf y > node_modules/pkg/new.js && printf more > run.log && head -c 2000000 /dev/zero > big.dat", workspace)
    shadow.restore(snapshot.commit)

    assert (workspace / "node_modules/pkg/new.js").read_bytes() == b"y"
    assert (workspace / "run.log").read_bytes() == b"more"
    assert (workspace / "big.dat").stat().st_size == 2000000
    assert (workspace / "build/out").read_bytes() == b"x"


def test_a_nested_git_repository_is_skipped_and_left_alone(workspace, shadow):
    sh("mkdir -p vendor/lib && cd vendor/lib && git init -q && printf v1 > lib.c", workspace)
    snapshot = shadow.snapshot()
    assert Skipped("vendor/lib", "nested git repository") in snapshot.skipped

    sh("printf v2 > vendor/lib/lib.c && printf y > vendor/lib/new.c", workspace)
    shadow.restore(snapshot.commit)

    assert (workspace / "vendor/lib/lib.c").read_bytes() == b"v2"
    assert (workspace / "vendor/lib/new.c").exists()


def test_a_file_that_grows_past_the_limit_is_left_out_of_the_next_snapshot(workspace, tmp_path):
    shadow = ShadowRepo(workspace, root=tmp_path / "checkpoints", max_file_bytes=100)
    first = shadow.snapshot()
    (workspace / "docs/notes.md").write_bytes(b"n" * 101)

    second = shadow.snapshot()

    assert Skipped("docs/notes.md", "over 100 bytes") in second.skipped
    assert [(c.path, c.status) for c in shadow.changes(first.commit, second.commit)] == [("docs/notes.md", "deleted")]


def test_restoring_chosen_paths_leaves_every_other_change_in_place(workspace, shadow):
    snapshot = shadow.snapshot()
    sh("printf edited > src/app.py && printf edited > docs/notes.md && printf new > docs/new.md && printf new > top.txt", workspace)

    touched = shadow.restore(snapshot.commit, ["docs", "top.txt"])

    assert touched == ["docs/new.md", "docs/notes.md", "top.txt"]
    assert (workspace / "src/app.py").read_bytes() == b"edited"
    assert (workspace / "docs/notes.md").read_bytes() == b"old notes\n"
    assert not (workspace / "docs/new.md").exists()
    assert not (workspace / "top.txt").exists()


def test_restore_refuses_paths_outside_the_workspace_and_unknown_commits(workspace, shadow):
    snapshot = shadow.snapshot()
    with pytest.raises(ValueError, match="leaves the workspace"):
        shadow.restore(snapshot.commit, ["../outside"])
    with pytest.raises(ValueError, match="not inside the workspace"):
        shadow.restore(snapshot.commit, ["/etc/passwd"])
    with pytest.raises(ValueError, match=".git folder"):
        shadow.restore(snapshot.commit, [".git/config"])
    with pytest.raises(UnknownCommit, match="no checkpoint"):
        shadow.restore("0" * 40)
    with pytest.raises(UnknownCommit, match="not a commit id"):
        shadow.restore("--all")


def test_changes_are_unified_diffs_per_file(workspace, shadow):
    first = shadow.snapshot()
    sh("printf 'print(2)\\n' > src/app.py && chmod -x run.sh && rm docs/notes.md && printf '\\000\\377' > blob.bin && printf 'a\\n' > added.txt", workspace)

    now = {c.path: c for c in shadow.changes(first.commit)}
    second = shadow.snapshot()

    assert {path: c.status for path, c in now.items()} == {
        "added.txt": "added",
        "blob.bin": "modified",
        "docs/notes.md": "deleted",
        "run.sh": "mode",
        "src/app.py": "modified",
    }
    assert "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-print(1)\n+print(2)\n" in now["src/app.py"].diff
    assert "+a\n" in now["added.txt"].diff and "-old notes\n" in now["docs/notes.md"].diff
    assert "old mode 100755\nnew mode 100644" in now["run.sh"].diff
    assert now["blob.bin"].binary and now["blob.bin"].diff == ""
    assert shadow.changes(first.commit, second.commit) == list(now.values())
    assert shadow.changes(second.commit) == []


def test_prune_keeps_only_the_snapshots_asked_for(workspace, shadow):
    commits = []
    for i in range(4):
        (workspace / f"step{i}.txt").write_bytes(os.urandom(2000))
        commits.append(shadow.snapshot().commit)
    kept = [commits[0], commits[2]]
    size_before = shadow.disk_bytes()

    shadow.prune(kept)

    assert sorted(shadow.snapshots()) == sorted(kept)
    assert shadow.disk_bytes() < size_before
    objects = sh(f"GIT_DIR={shadow.git_dir} git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)'", workspace)
    trees = {line.split()[1] for line in objects.splitlines() if line.startswith("tree")}
    assert set(kept) <= trees and not {commits[1], commits[3]} & trees  # the dropped snapshots' trees are gone
    shadow.restore(commits[2])
    assert sorted(p.name for p in workspace.glob("step*.txt")) == ["step0.txt", "step1.txt", "step2.txt"]
    with pytest.raises(UnknownCommit):  # (the last one would be written again by the restore's own look)
        shadow.restore(commits[1])
    with pytest.raises(UnknownCommit, match="not a commit id"):
        shadow.prune(["HEAD"])


def test_a_creation_killed_part_way_leaves_a_folder_that_a_later_creation_clears(tmp_path):
    root = tmp_path / "checkpoints"
    abandoned, under_way = root / ".new-abandoned", root / ".new-under-way"
    for folder in (abandoned, under_way):
        (folder / "objects").mkdir(parents=True)
    an_hour_and_more_ago = time.time() - _git.ABANDONED_AFTER_S - 60
    os.utime(abandoned, (an_hour_and_more_ago, an_hour_and_more_ago))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")

    ShadowRepo(workspace, root=root).snapshot()

    assert not abandoned.exists()
    assert under_way.exists()  # another process may be making its repository right now


def test_a_prune_deletes_the_objects_of_the_snapshots_it_drops_and_does_nothing_when_all_are_kept(workspace, shadow):
    first = shadow.snapshot()
    (workspace / "only-in-the-second.txt").write_text("soon gone\n")
    second = shadow.snapshot()
    packs = sorted((shadow.git_dir / "objects" / "pack").glob("*"))

    shadow.prune([first.commit, second.commit])  # nothing to drop: no git at all
    assert sorted((shadow.git_dir / "objects" / "pack").glob("*")) == packs  # no repack, no journal packed
    assert shadow_git(shadow, "for-each-ref").stdout == ""  # no refs made for the logged ones
    assert set(shadow.snapshots()) == {first.commit, second.commit}

    shadow.prune([first.commit])
    assert shadow_git(shadow, "cat-file", "-e", second.commit).returncode != 0
    assert shadow_git(shadow, "fsck", "--no-dangling").returncode == 0
    assert shadow.snapshots() == [first.commit]
    (workspace / "run.sh").unlink()
    shadow.restore(first.commit)
    assert (workspace / "run.sh").exists() and not (workspace / "only-in-the-second.txt").exists()


def test_a_snapshot_after_a_prune_that_dropped_the_last_one_is_kept_even_when_nothing_changed(workspace, shadow):
    first = shadow.snapshot()
    (workspace / "new.txt").write_text("new\n")
    last = shadow.snapshot()
    shadow.prune([first.commit])

    again = shadow.snapshot()

    assert again.commit in shadow.snapshots()
    shadow.prune([first.commit, again.commit])  # the sweep: what no kept snapshot names goes
    assert shadow_git(shadow, "fsck", "--no-dangling").returncode == 0
    (workspace / "new.txt").unlink()
    shadow.restore(again.commit)
    assert (workspace / "new.txt").read_text() == "new\n"
    assert again.commit == last.commit  # the same state, the same tree: logged again, so kept


def test_a_prune_by_another_process_never_leaves_a_later_snapshot_without_its_objects(workspace, tmp_path):
    # Each host keeps its shadow repository open; one prunes while the other's index, in memory
    # only, names a blob that only the pruned snapshot held.
    root = tmp_path / "checkpoints"
    host_a, host_b = ShadowRepo(workspace, root=root), ShadowRepo(workspace, root=root)
    first = host_a.snapshot()
    (workspace / "kept-only-by-the-second.txt").write_text("one\n")
    host_a.snapshot()
    host_b.prune([first.commit])
    (workspace / "later.txt").write_text("two\n")

    third = host_a.snapshot()

    assert shadow_git(host_a, "fsck", "--no-dangling").returncode == 0
    (workspace / "kept-only-by-the-second.txt").unlink()
    host_a.restore(third.commit)
    assert (workspace / "kept-only-by-the-second.txt").read_text() == "one\n"


def test_a_restore_leaves_no_temporary_files_and_the_next_snapshot_is_clean(workspace, shadow):
    snapshot = shadow.snapshot()
    sh("printf changed > src/app.py", workspace)
    shadow.restore(snapshot.commit)

    assert not [p for p in workspace.rglob(f"*{TEMP_SUFFIX}")]
    assert shadow.changes(snapshot.commit) == []


# Kill -9 mid-way: a worker process (tests/checkpoints/shadow_worker.py) snapshots or restores
# a tree big enough to take a while, stops at a chosen point, and its whole process group (git
# included) is killed with SIGKILL there.

WORKER = Path(__file__).with_name("shadow_worker.py")
ROOT = Path(__file__).resolve().parents[2]
FILES = 300


def write_tree(workspace: Path, version: int) -> None:
    """A tree of FILES random files; version 2 changes every one and adds, deletes and chmods some."""
    for i in range(FILES):
        if version == 2 and i % 100 == 7:
            (workspace / f"d{i % 30}" / f"f{i}").unlink()
            continue
        path = workspace / f"d{i % 30}" / f"f{i}"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(4_000))
        if i % 50 == 3:
            path.chmod(0o755 if version == 1 else 0o644)
    if version == 2:
        for i in range(20):
            (workspace / "new" / f"n{i}").parent.mkdir(exist_ok=True)
            (workspace / "new" / f"n{i}").write_bytes(os.urandom(5000))


def start_worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,  # its own process group: the kill takes git with it, as a crash would
    )


def wait_for_line(worker: subprocess.Popen[str], expected: str, timeout: float = 60.0) -> None:
    assert worker.stdout is not None
    ready, _, _ = select.select([worker.stdout], [], [], timeout)
    assert ready, f"the worker did not say {expected!r} within {timeout} s"
    assert worker.stdout.readline().strip() == expected


def kill(worker: subprocess.Popen[str]) -> None:
    os.killpg(worker.pid, 9)
    assert worker.wait(timeout=60) == -9


def shadow_git(shadow: ShadowRepo, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], env={**env, "GIT_DIR": str(shadow.git_dir)}, capture_output=True, text=True)


@pytest.mark.parametrize(
    "point", ["stage:diff", "stage:add:150", "index-locked", "stage:write_tree", "stage:unlogged"]
)
def test_a_snapshot_killed_mid_way_leaves_the_workspace_and_the_shadow_repository_consistent(tmp_path, point):
    workspace, root = tmp_path / "workspace", tmp_path / "checkpoints"
    workspace.mkdir()
    write_tree(workspace, 1)
    shadow = ShadowRepo(workspace, root=root)
    first = shadow.snapshot()
    v1 = state(workspace)
    write_tree(workspace, 2)
    v2 = state(workspace)

    worker = start_worker("snapshot", str(workspace), str(root), point)
    wait_for_line(worker, f"at {point}")
    kill(worker)

    assert state(workspace) == v2  # a snapshot never writes to the workspace
    assert shadow.snapshots() == [first.commit]  # the killed one never got its ref
    second = shadow.snapshot()  # the shadow repository is usable: stale locks cleared
    assert shadow_git(shadow, "fsck", "--no-dangling").returncode == 0
    assert shadow.changes(second.commit) == []
    shadow.restore(first.commit)
    assert state(workspace) == v1
    shadow.restore(second.commit)
    assert state(workspace) == v2


@pytest.mark.parametrize("point", ["half-written:1", "replaced:150", "half-written:250", "git:diff-tree"])
def test_a_restore_killed_mid_way_leaves_each_file_as_before_or_as_restored(tmp_path, point):
    workspace, root = tmp_path / "workspace", tmp_path / "checkpoints"
    workspace.mkdir()
    write_tree(workspace, 1)
    shadow = ShadowRepo(workspace, root=root)
    first = shadow.snapshot()
    v1 = state(workspace)
    write_tree(workspace, 2)
    shadow.snapshot()
    v2 = state(workspace)

    worker = start_worker("restore", str(workspace), str(root), point, first.commit)
    wait_for_line(worker, f"at {point}")
    kill(worker)

    now = state(workspace)
    leftovers = [path for path in now if path.endswith(TEMP_SUFFIX)]
    assert len(leftovers) <= 1  # at most the file being written when it died
    for path in (set(v1) | set(v2) | set(now)) - set(leftovers):
        assert now.get(path) in (v1.get(path), v2.get(path)), path
    if point.startswith("half-written") or point.startswith("replaced"):
        assert now != v2 and now != v1  # it died part way through

    shadow.snapshot()  # the next use clears what the killed restore left
    assert not [path for path in state(workspace) if path.endswith(TEMP_SUFFIX)]
    assert shadow_git(shadow, "fsck", "--no-dangling").returncode == 0
    shadow.restore(first.commit)
    assert state(workspace) == v1


def test_a_git_lock_still_held_by_a_running_process_is_not_taken_for_a_stale_one(workspace, shadow, monkeypatch):
    # Say a git of ours outlived its killed parent and still writes the index: wait for it, bounded.
    first = shadow.snapshot()
    lock = shadow.git_dir / "index.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"f = open({str(lock)!r}, 'a'); print('open', flush=True); input()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    wait_for_line(holder, "open")
    (shadow.git_dir / "overseer.lock").write_bytes(b"1")  # as its killed parent left the shadow lock: busy
    monkeypatch.setattr(_git, "LOCK_HELD_WAIT_S", 0.2)

    with pytest.raises(GitError, match=f"held by a running process \\(pid {holder.pid}\\)"):
        shadow.snapshot()
    assert lock.exists()

    holder.communicate("\n", timeout=60)  # it exits; its lock file stays behind, stale now
    assert lock.exists()
    assert shadow.changes(first.commit) == []
    assert not lock.exists()
