"""Overseer's own folders (the data dir, the checkpoints dir): never open to an agent's file tools.

The data dir holds the database (sessions, audit, hashed keys, OAuth tokens) and, by default,
the checkpoints: shadow git repositories with every byte of every workspace. A workspace may
hold them (a person's home as the workspace, `checkpoints.dir` inside another agent's
workspace), so confining paths to the workspace is not enough. The file server refuses them
and leaves them out of listings and searches; the host's rules deny them before any rule is
read, for the audit trail. Both judge a path here, the same way.

A path is Overseer's when the deepest folder holding it, among the own folders and the folders
a call may use (its workspace; for reading, the skill folders), is an own folder. So a named
agent's default workspace (`<data dir>/agents/<id>/workspace`) and the skill folder in the data
dir stay usable, while a checkpoints dir inside a workspace does not. Folders are compared by
resolved path and, where they exist, by device and inode, so another spelling of a name (case on
a case-insensitive disk, a bind mount) reaches the same answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

OwnWhat = Literal["data dir", "checkpoints dir"]


@dataclass(frozen=True)
class OwnFolder:
    """One of Overseer's folders, as configured (it may not exist yet)."""

    what: OwnWhat
    path: Path


def refusal(shown: str, folder: OwnFolder) -> str:
    """What the model reads when a call reaches `folder` through the path it wrote as `shown`."""
    return f"'{shown}' is Overseer's own data (its {folder.what}, {folder.path}), never open to tools"


def own_folder_of(
    folders: Sequence[OwnFolder], resolved: Path, usable: Iterable[Path] = ()
) -> OwnFolder | None:
    """The own folder that holds the already-resolved `resolved`, unless a deeper usable folder does.

    `usable`: folders the call may use (its workspace, read roots for a read). An own folder
    that is itself usable is still refused: the data dir is no workspace.
    """
    if not folders:
        return None
    # Plain strings and os.path: a listing's every line is judged (pathlib costs 3x as much).
    own_paths: dict[str, OwnFolder] = {}
    own_ids: dict[tuple[int, int], OwnFolder] = {}
    for folder in folders:
        real, ident = _real(folder.path)
        own_paths[real] = folder
        if ident is not None:
            own_ids[ident] = folder
    usable_paths: set[str] = set()
    usable_ids: set[tuple[int, int]] = set()
    for path in usable:
        real, ident = _real(path)
        usable_paths.add(real)
        if ident is not None:
            usable_ids.add(ident)
    current = str(resolved)
    while True:
        if current in own_paths:
            return own_paths[current]
        ident = _identity(current)
        if ident is not None and ident in own_ids:
            return own_ids[ident]
        if current in usable_paths or (ident is not None and ident in usable_ids):
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def own_identities(folders: Sequence[OwnFolder]) -> frozenset[tuple[int, int]]:
    """(device, inode) of each own folder that exists: what a walk leaves out."""
    return frozenset(ident for f in folders if (ident := _real(f.path)[1]) is not None)


_REAL_KEPT: dict[str, tuple[str, tuple[int, int]]] = {}
_REAL_KEPT_MAX = 256


def identity_of(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _real(path: Path) -> tuple[str, tuple[int, int] | None]:
    """`path` resolved, and its (device, inode) if it exists; kept while a stat through it still
    finds the same folder.

    realpath walks name by name in Python, and every line of a listing is judged: one stat
    (the kernel's walk) tells whether the last answer still holds.
    """
    given = os.path.expanduser(path)
    ident = _identity(given)
    kept = _REAL_KEPT.get(given)
    if kept is not None and ident is not None and kept[1] == ident:
        return kept[0], ident
    real = os.path.realpath(given)
    if ident is not None:
        if len(_REAL_KEPT) >= _REAL_KEPT_MAX:
            _REAL_KEPT.clear()
        _REAL_KEPT[given] = (real, ident)
    return real, ident


def _identity(path: str) -> tuple[int, int] | None:
    try:
        return identity_of(os.stat(path))
    except (OSError, ValueError):
        return None
