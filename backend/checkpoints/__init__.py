"""Checkpoints (issue 32): the workspace as it was before each step, kept in a shadow git
repository beside the user's own (`backend/checkpoints/shadow.py`), so any step can be undone."""

from backend.checkpoints.shadow import ShadowRepo
from backend.checkpoints.values import FileChange, Skipped, Snapshot, UnknownCommit

__all__ = ["FileChange", "ShadowRepo", "Skipped", "Snapshot", "UnknownCommit"]
