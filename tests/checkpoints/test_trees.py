"""A snapshot's tree made from the last one and the files that changed (`_trees.py`): the very
tree the index writes, the index told of it when next used, and every case it does not expect left to the index."""

from __future__ import annotations

import os
import random
import stat
import subprocess
from pathlib import Path

import pygit2
import pytest

from backend.checkpoints import ShadowRepo
from backend.checkpoints._journal import BLOB, Journal
from backend.checkpoints._trees import EXECUTABLE, FILE, LINK, Blob, Trees, _read_all, read_blob


def bare_repo(tmp_path: Path, workspace: Path) -> pygit2.Repository:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "git")], check=True)
    repo = pygit2.Repository(str(tmp_path / "git"))
    repo.workdir = str(workspace)
    return repo


def tree_of(shadow: ShadowRepo, snapshot_id: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={shadow.git_dir}", "rev-parse", f"{snapshot_id}^{{tree}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()


def test_trees_built_from_the_last_one_equal_the_trees_the_index_writes_after_random_changes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    repo = bare_repo(tmp_path, workspace)
    index = repo.index
    journal = Journal(tmp_path / "git")
    trees = Trees(repo, journal)
    trees.reset(index.write_tree())
    rng = random.Random(7)
    present: dict[str, bytes] = {}
    root = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for step in range(300):
            removals: list[str] = []
            blobs = {}
            for _ in range(rng.randrange(1, 4)):
                path = "/".join(rng.choice("abc") for _ in range(rng.randrange(0, 3))) + f"/f{rng.randrange(4)}"
                path = path.lstrip("/")
                full = workspace / path
                if path in present and rng.random() < 0.4 and path not in blobs:
                    full.unlink()
                    del present[path]
                    removals.append(path)
                    continue
                if any(p in present for p in _parents(path)) or full.is_dir():
                    continue  # a file where a folder would go: the watch makes that a full look
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_bytes(os.urandom(rng.randrange(0, 50)))
                full.chmod(rng.choice([0o644, 0o755]))
                present[path] = b""
                blob = read_blob(root, path, 1000)
                assert blob is not None
                blobs[path] = blob
                if path in removals:
                    removals.remove(path)
            for path in removals:
                index.remove(path)
            for path, blob in blobs.items():
                index.add(pygit2.IndexEntry(path, pygit2.Oid(raw=blob.id), pygit2.enums.FileMode(blob.mode)))
            built = trees.apply(removals, blobs)
            assert built is not None, f"step {step}"
            tree, records = built
            journal.append([(b.id, BLOB, b.data) for b in blobs.values()] + records)
            assert tree == str(index.write_tree()), f"step {step}: {removals} {list(blobs)}"
    finally:
        os.close(root)


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def test_a_change_the_last_tree_does_not_fit_is_declined_and_forgets_the_builders(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "f").write_text("f")
    (workspace / "g").write_text("g")
    repo = bare_repo(tmp_path, workspace)
    index = repo.index
    index.add("d/f")
    index.add("g")
    trees = Trees(repo, Journal(tmp_path / "git"))
    trees.reset(index.write_tree())
    blob = Blob(repo.create_blob(b"x").raw, FILE, b"x")
    assert trees.apply(["not-there"], {}) is None  # a removal of what the tree does not hold
    assert not trees.ready
    trees.reset(index.write_tree())
    assert trees.apply([], {"d": blob}) is None  # a file where a folder is
    trees.reset(index.write_tree())
    assert trees.apply([], {"g/inside": blob}) is None  # a folder where a file is
    assert Trees(repo, Journal(tmp_path / "git")).apply([], {}) is None  # no last tree known


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end_or_refused_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    with open(path, "rb") as file:
        with path.open("ab") as more:
            more.write(b"y" * 5)  # it grew after its size was taken
        assert _read_all(file.fileno(), 10, 100) == b"x" * 10 + b"y" * 5
    with open(path, "rb") as file:
        assert _read_all(file.fileno(), 10, 12) is None
    with open(path, "rb") as file:
        assert _read_all(file.fileno(), 20, 100) == b"x" * 10 + b"y" * 5  # shrank: its end is where it ends


def test_a_blob_is_read_as_the_index_would_and_never_through_a_link(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "real").mkdir(parents=True)
    (workspace / "real" / "f").write_text("inside")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "link").symlink_to("real/f")
    (workspace / "via").symlink_to(tmp_path / "outside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    os.mkfifo(workspace / "pipe")
    repo = bare_repo(tmp_path, workspace)
    root = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        executable = read_blob(root, "run.sh", 1000)
        link = read_blob(root, "link", 1000)
        nested = read_blob(root, "real/f", 1000)
        assert executable is not None and executable.mode == EXECUTABLE
        assert link is not None and link.mode == LINK and link.data == b"real/f"
        assert nested is not None and nested.mode == FILE and nested.data == b"inside"
        assert read_blob(root, "via/secret", 1000) is None  # a linked folder is not entered
        assert read_blob(root, "pipe", 1000) is None  # left to the index (never opened here)
        assert read_blob(root, "real/f", 3) is None  # over the limit
        assert read_blob(root, "gone", 1000) is None
        # What an lstat said a moment ago is not trusted past the open: a file since swapped
        # for a link is not read through, nor a fifo read.
        regular = stat.S_IFREG
        assert read_blob(root, "link", 1000, kind=regular) is None
        assert read_blob(root, "pipe", 1000, kind=regular) is None
        assert read_blob(root, "run.sh", 1000, kind=regular) == executable
        assert read_blob(root, "link", 1000, kind=stat.S_IFLNK) == link
    finally:
        os.close(root)
    index = repo.index
    for path in ("run.sh", "link", "real/f"):
        index.add(path)
    assert [(e.path, e.id.raw, int(e.mode)) for e in index] == [
        ("link", link.id, link.mode), ("real/f", nested.id, nested.mode), ("run.sh", executable.id, executable.mode)
    ]


@pytest.mark.parametrize("seed", range(3))
def test_snapshots_of_a_few_changed_files_take_the_journals_way_and_equal_a_full_look(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "src").mkdir()
    watched = ShadowRepo(workspace, root=tmp_path / "watched")
    looking = ShadowRepo(workspace, root=tmp_path / "looking", watch=False)
    looking.snapshot()
    looking._stager._apply_few = lambda *changes: None  # type: ignore[union-attr]  # git's way: the reference

    def looked() -> str:
        return tree_of(looking, looking.snapshot().commit)

    built = []
    real_apply = Trees.apply
    monkeypatch.setattr(Trees, "apply", lambda self, *a: built.append(real_apply(self, *a)) or built[-1])
    rng = random.Random(seed)
    watched.snapshot()
    for step in range(60):
        name = rng.choice(["a.txt", "src/b.py", "src/c.sh", "link"])
        target = workspace / name
        action = rng.choice(["write", "write", "delete", "chmod"])
        if action == "write" and name == "link":
            if not target.is_symlink():
                target.symlink_to(rng.choice(["a.txt", "nowhere"]))
        elif action == "write":
            target.write_bytes(os.urandom(rng.randrange(1, 100)))
        elif action == "delete" and (target.exists() or target.is_symlink()):
            target.unlink()
        elif action == "chmod" and target.exists() and not target.is_symlink():
            target.chmod(rng.choice([0o644, 0o700]))
        one = watched.snapshot_if_small() or watched.snapshot()
        watched.settle()  # git reads objects from its own store only
        assert tree_of(watched, one.commit) == looked(), f"step {step}"
        if rng.random() < 0.2:
            # The index is told what the journal's way changed only when it is next used
            # (a path's last change only): then it writes the very same tree.
            stager = watched._stager
            assert stager is not None
            assert str(stager._index_now().write_tree()) == tree_of(watched, one.commit), f"step {step}"
    assert sum(tree is not None for tree in built) > 40
