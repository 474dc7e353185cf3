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
    own = [(f, _real(f.path)) for f in folders]
    own_ids = {ident: f for f, real in own if (ident := _identity(real)) is not None}
    own_paths = {real: f for f, real in own}
    usable_real = [_real(p) for p in usable]
    usable_ids = {ident for real in usable_real if (ident := _identity(real)) is not None}
    for folder in (resolved, *resolved.parents):
        if folder in own_paths:
            return own_paths[folder]
        ident = _identity(folder)
        if ident is not None and ident in own_ids:
            return own_ids[ident]
        if folder in usable_real or (ident is not None and ident in usable_ids):
            return None
    return None


def own_identities(folders: Sequence[OwnFolder]) -> frozenset[tuple[int, int]]:
    """(device, inode) of each own folder that exists: what a walk leaves out."""
    return frozenset(ident for f in folders if (ident := _identity(_real(f.path))) is not None)


def identity_of(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.expanduser()))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        return identity_of(os.stat(path))
    except (OSError, ValueError):
        return None
