"""Small filesystems a test makes, fills and frees: a full disk, for real.

`small_filesystem` mounts a tmpfs of a few megabytes (root, or CAP_SYS_ADMIN: the test machines
and CI run as root); `fill` writes a file until the filesystem has no byte left. Deleting that
file gives the room back.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def small_filesystem(where: Path, *, megabytes: int = 16) -> Iterator[Path]:
    """A tmpfs of `megabytes` mounted at `where` (made if missing), unmounted after."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m,mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        raise RuntimeError(
            f"cannot mount a tmpfs at {where} ({mounted.stderr.strip()}): this test needs root "
            "or CAP_SYS_ADMIN, as on the test machines and CI"
        )
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write a file in `folder` until its filesystem is full; delete the file to free the room."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1):
            chunk = b"\0" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
    return filler
