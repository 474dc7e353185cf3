"""A process that snapshots or restores a workspace and can stop at a chosen point, to be killed there.

    python shadow_worker.py snapshot WORKSPACE ROOT POINT
    python shadow_worker.py restore WORKSPACE ROOT POINT COMMIT

POINT is where it stops and waits (its stdin never closes) after printing "at POINT":
- `git:<command>`: just before running that git command (`diff-tree`, `cat-file`, ...);
- `stage:<step>`: in a snapshot (done in process by libgit2, backend/checkpoints/_stage.py), just
  before the diff of the index with the workspace (`diff`), the n-th file's hashing (`add:<n>`) or
  the tree's writing (`write_tree`), or with the tree written and not yet in the snapshot log
  (`unlogged`);
- `index-locked`: as libgit2 would leave it if killed while writing the index: `index.lock`
  made and held open, the index not yet replaced;
- `replaced:<n>`: after a restore renamed its n-th file into place;
- `half-written:<n>`: in the middle of writing a restore's n-th file.
It prints "done" if it gets to the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pygit2

from backend.checkpoints import _git, _restore
from backend.checkpoints.shadow import ShadowRepo


def stop_here(point: str) -> None:
    print(f"at {point}", flush=True)
    sys.stdin.read()  # until killed


def main() -> None:
    operation, workspace, root, point, *rest = sys.argv[1:]
    kind, _, argument = point.partition(":")
    run = _git.Git.run

    def watched_run(self: _git.Git, *args: str, **kwargs: object) -> bytes:
        if kind == "git" and args[0] == argument:
            stop_here(point)
        if kind == "running" and args[0] == argument:
            print(f"at {point}", flush=True)
        return run(self, *args, **kwargs)  # type: ignore[arg-type]

    _git.Git.run = watched_run  # type: ignore[method-assign]
    stage_step, _, nth = argument.partition(":")
    added = 0

    def stopping(method_owner: object, name: str, step: str) -> None:
        real = getattr(method_owner, name)

        def stop_first(*args: object, **kwargs: object) -> object:
            nonlocal added
            if step == "add":
                added += 1
            if kind == "stage" and stage_step == step and (step != "add" or added == int(nth)):
                stop_here(point)
            return real(*args, **kwargs)

        setattr(method_owner, name, stop_first)

    stopping(pygit2.Index, "diff_to_workdir", "diff")
    stopping(pygit2.Index, "add", "add")
    real_write_tree = pygit2.Index.write_tree

    def tree_then_stop(*args: object, **kwargs: object) -> object:
        tree = real_write_tree(*args, **kwargs)
        if kind == "stage" and stage_step == "unlogged":
            stop_here(point)
        return tree

    pygit2.Index.write_tree = tree_then_stop  # type: ignore[method-assign]
    stopping(pygit2.Index, "write_tree", "write_tree")
    real_index_write = pygit2.Index.write

    def index_write(index: pygit2.Index) -> None:
        if kind == "index-locked":
            # What libgit2 holds while it writes the index; the kill leaves it behind.
            held = os.open(index_lock[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            os.write(held, b"DIRC")
            stop_here(point)
        real_index_write(index)

    index_lock: list[Path] = []
    pygit2.Index.write = index_write  # type: ignore[method-assign]
    replaced = 0
    real_replace = os.replace

    def counted_replace(source: str | Path, target: str | Path) -> None:
        nonlocal replaced
        real_replace(source, target)
        replaced += 1
        if kind == "replaced" and replaced == int(argument):
            stop_here(point)

    os.replace = counted_replace  # type: ignore[assignment]
    written = 0
    write_all = _restore._write_all

    def halted_write(descriptor: int, data: bytes) -> None:
        nonlocal written
        written += 1
        if kind == "half-written" and written == int(argument):
            write_all(descriptor, data[: len(data) // 2])
            stop_here(point)
        write_all(descriptor, data)

    _restore._write_all = halted_write  # type: ignore[assignment]

    shadow = ShadowRepo(Path(workspace), root=Path(root))
    index_lock.append(shadow.git_dir / "index.lock")
    if operation == "snapshot":
        shadow.snapshot()
    else:
        shadow.restore(rest[0])
    print("done", flush=True)


if __name__ == "__main__":
    main()
