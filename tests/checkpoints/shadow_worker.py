"""A process that snapshots or restores a workspace and can stop at a chosen point, to be killed there.

    python shadow_worker.py snapshot WORKSPACE ROOT POINT
    python shadow_worker.py restore WORKSPACE ROOT POINT COMMIT

POINT is where it stops and waits (its stdin never closes) after printing "at POINT":
- `git:<command>`: just before running that git command (`update-ref`, `write-tree`, ...);
- `running:<command>`: as that git command starts (it prints, and runs it; the test waits for a
  sign of it on disk, say git's `index.lock`);
- `replaced:<n>`: after a restore renamed its n-th file into place;
- `half-written:<n>`: in the middle of writing a restore's n-th file.
It prints "done" if it gets to the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
    if operation == "snapshot":
        shadow.snapshot("killed mid-way")
    else:
        shadow.restore(rest[0])
    print("done", flush=True)


if __name__ == "__main__":
    main()
