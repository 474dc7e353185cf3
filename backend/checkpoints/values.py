"""The values a shadow repository hands out: snapshots, what they left out, what changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Skipped:
    """A file or folder a snapshot left out, and why."""

    path: str
    """Workspace-relative, `/`-separated; a folder has no trailing slash."""
    reason: str
    """"over 5 MB", "ignored (.gitignore)", "ignored (node_modules)", "nested git repository",
    "unreadable"."""


@dataclass(frozen=True)
class Snapshot:
    """The workspace as it was, in the shadow repository, and what it left out."""

    commit: str
    """Its id there: a tree (a root commit of one, in checkpoints of earlier versions); the name
    stays `commit`, as stored in checkpoints' rows."""
    skipped: tuple[Skipped, ...]


ChangeStatus = Literal["added", "modified", "deleted", "mode", "renamed"]


@dataclass(frozen=True)
class FileChange:
    """One file that differs between two states of the workspace."""

    path: str
    """Where the file is in the newer state (a deleted file: where it was)."""
    status: ChangeStatus
    diff: str
    """git's unified diff of the file ("" when binary)."""
    binary: bool
    added: int = 0
    """Lines added, counted in `diff` (0 when binary)."""
    removed: int = 0
    """Lines removed, counted in `diff` (0 when binary)."""
    old_path: str | None = None
    """A renamed (moved) file: where it was in the older state."""
    similarity: int | None = None
    """A renamed file: how much of it is unchanged, in percent (git's similarity index)."""


class UnknownCommit(ValueError):
    """A commit id that is malformed or not in this workspace's shadow repository."""
