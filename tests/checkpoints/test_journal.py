"""The object journal (`_journal.py`): a snapshot of a few files makes no object file, its objects
reach a pack git reads like its own, other processes find them, and a kill in the middle of an
append loses no whole record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from backend.checkpoints import ShadowRepo
from backend.checkpoints._journal import JOURNAL, PACK_AFTER_OBJECTS


def git(shadow: ShadowRepo, *args: str) -> str:
    done = subprocess.run(["git", f"--git-dir={shadow.git_dir}", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def loose_objects(shadow: ShadowRepo) -> int:
    objects = shadow.git_dir / "objects"
    return sum(len(os.listdir(objects / d)) for d in os.listdir(objects) if len(d) == 2)


def journal_bytes(shadow: ShadowRepo) -> int:
    path = shadow.git_dir / JOURNAL
    return path.stat().st_size if path.exists() else 0


def test_snapshots_of_a_few_files_make_no_object_file_and_their_pack_is_read_by_git(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    shadow = ShadowRepo(workspace, root=tmp_path / "shadow")
    shadow.snapshot()
    loose = loose_objects(shadow)
    taken: list[tuple[str, dict[str, str]]] = []
    for i in range(30):
        (workspace / "src" / f"f{i % 4}.py").write_text(f"print({i})\n")
        snapshot = shadow.snapshot_if_small()
        assert snapshot is not None
        taken.append((snapshot.commit, {p.name: p.read_text() for p in (workspace / "src").iterdir()}))
    assert loose_objects(shadow) == loose  # all of it went to the journal
    assert journal_bytes(shadow) > 0

    shadow.settle()
    assert journal_bytes(shadow) == 0
    [pack] = (shadow.git_dir / "objects" / "pack").glob("*.idx")
    assert "ok" in subprocess.run(
        ["git", f"--git-dir={shadow.git_dir}", "verify-pack", "-v", str(pack)], capture_output=True, text=True
    ).stdout.splitlines()[-1]
    git(shadow, "fsck", "--full", "--no-dangling")
    for commit, files in taken:
        assert {name: git(shadow, "show", f"{commit}:src/{name}") for name in files} == files


def test_another_process_reads_what_one_left_in_its_journal_and_both_go_on(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\n")
    host = ShadowRepo(workspace, root=tmp_path / "shadow")
    host.snapshot()
    (workspace / "a.txt").write_text("two\n")
    before_two = host.snapshot_if_small()
    assert before_two is not None and journal_bytes(host) > 0
    (workspace / "a.txt").write_text("three\n")

    cli = ShadowRepo(workspace, root=tmp_path / "shadow")  # as `overseer rewind` opens it
    [change] = cli.changes(before_two.commit)
    assert "-two" in change.diff and "+three" in change.diff
    assert journal_bytes(host) == 0  # the reader packed it

    (workspace / "a.txt").write_text("four\n")
    before_four = host.snapshot_if_small()  # appends to the emptied journal
    assert before_four is not None
    assert cli.restore(before_two.commit) == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "two\n"
    assert host.restore(before_four.commit) == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "four\n"
    git(host, "fsck", "--full", "--no-dangling")


def test_a_full_journal_is_packed_by_the_next_snapshot_on_a_worker(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shadow = ShadowRepo(workspace, root=tmp_path / "shadow")
    shadow.snapshot()
    inline = 0
    for i in range(PACK_AFTER_OBJECTS // 2 + 10):  # a blob and a root tree each
        (workspace / "a.txt").write_text(f"{i}\n")
        if shadow.snapshot_if_small() is not None:
            inline += 1
        else:
            shadow.snapshot()
    assert inline > PACK_AFTER_OBJECTS // 2 - 10
    assert len(list((shadow.git_dir / "objects" / "pack").glob("*.pack"))) == 1
    assert journal_bytes(shadow) < 100 * 50


WORKER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from backend.checkpoints import _journal
    from backend.checkpoints.shadow import ShadowRepo

    workspace, root, cut_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    shadow = ShadowRepo(workspace, root=root)
    shadow.snapshot()
    appends = 0
    real_append = _journal.Journal.append

    class HalfWrite:  # the n-th append: half its bytes reach the file, then the process is killed
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def write(fd, data):
            os.write(fd, bytes(data)[: len(data) // 2])
            print("cut", flush=True)
            sys.stdin.read()

    def append(self, records):
        global appends
        appends += 1
        if appends == cut_at:
            _journal.os = HalfWrite()
        return real_append(self, records)

    _journal.Journal.append = append
    for i in range(1, 1000):
        (workspace / f"f{i % 3}.txt").write_text(f"step {i}\\n")
        snapshot = shadow.snapshot_if_small()
        assert snapshot is not None
        print(snapshot.commit, i, flush=True)
    """
)


def test_a_kill_in_the_middle_of_an_append_keeps_every_whole_record_and_later_snapshots_are_sound(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = tmp_path / "shadow"
    host = ShadowRepo(workspace, root=root)  # open, as a host keeps it, while another process dies
    host.snapshot()
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(workspace), str(root), "12"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    taken: list[tuple[str, int]] = []
    assert worker.stdout is not None
    try:
        for line in worker.stdout:
            if line.strip() == "cut":
                break
            commit, step = line.split()
            taken.append((commit, int(step)))
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    assert len(taken) == 11  # the 12th snapshot's append was cut in half
    assert journal_bytes(host) > 0

    (workspace / "f0.txt").write_text("after\n")
    assert host.snapshot_if_small() is None  # a dead holder's mark: nothing appended after its half record
    shadow = host
    after = shadow.snapshot()  # clears its leftovers: the whole records packed, the half one dropped
    shadow.settle()
    git(shadow, "fsck", "--full", "--no-dangling")

    def expected(step: int) -> dict[str, str]:
        return {f"f{n % 3}.txt": f"step {n}\n" for n in range(1, step + 1)}

    for commit, step in taken:
        files = git(shadow, "ls-tree", "--name-only", commit).split()
        assert {name: git(shadow, "show", f"{commit}:{name}") for name in files} == expected(step)
    assert git(shadow, "show", f"{after.commit}:f0.txt") == "after\n"
    (workspace / "f1.txt").write_text("later\n")
    later = shadow.snapshot_if_small()
    assert later is not None
    shadow.settle()
    assert git(shadow, "show", f"{later.commit}:f1.txt") == "later\n"
    git(shadow, "fsck", "--full", "--no-dangling")
