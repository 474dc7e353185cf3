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
    """A commit of the shadow repository holding the workspace as it was, and what it left out."""

    commit: str
    skipped: tuple[Skipped, ...]


ChangeStatus = Literal["added", "modified", "deleted", "mode"]


@dataclass(frozen=True)
class FileChange:
    """One file that differs between two states of the workspace."""

    path: str
    status: ChangeStatus
    diff: str
    """git's unified diff of the file ("" when binary)."""
    binary: bool


class UnknownCommit(ValueError):
    """A commit id that is malformed or not in this workspace's shadow repository."""
