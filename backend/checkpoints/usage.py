"""The disk checkpoints take, for Settings: in all, and per workspace with its checkpoint count."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    from backend.store.base import Store

log = logging.getLogger(__name__)


class WorkspaceUsage(BaseModel):
    """One workspace's checkpoints and the disk its shadow repository takes."""

    workspace: str
    checkpoints: int
    bytes: int


class CheckpointUsage(BaseModel):
    """The disk checkpoints take, for Settings."""

    enabled: bool
    dir: str
    bytes: int
    """Everything under `dir` (shadow repositories of workspaces no checkpoint names any more included)."""
    keep_last: int
    keep_days: float
    workspaces: list[WorkspaceUsage]


class _Repository(Protocol):
    def disk_bytes(self) -> int: ...


class Measured(Protocol):
    """What is measured: the checkpointer (backend/checkpoints/steps.py), without a cycle."""

    store: Store
    root: Path
    enabled: bool
    keep_last: int
    keep_days: float
    clock: Callable[[], datetime]

    async def shadow_for(self, workspace: Path) -> _Repository: ...


async def measure_usage(checkpointer: Measured) -> CheckpointUsage:
    """What `checkpointer`'s folder takes, and each workspace's share of it."""
    store = checkpointer.store
    workspaces: list[WorkspaceUsage] = []
    for workspace in await store.checkpoint_workspaces():
        count = len(await store.retained_checkpoints(workspace, before=checkpointer.clock()))
        size = 0
        if Path(workspace).is_dir():
            try:
                size = await asyncio.to_thread((await checkpointer.shadow_for(Path(workspace))).disk_bytes)
            except Exception:
                log.exception("measuring the checkpoints of %s failed", workspace)
        workspaces.append(WorkspaceUsage(workspace=workspace, checkpoints=count, bytes=size))
    return CheckpointUsage(
        enabled=checkpointer.enabled,
        dir=str(checkpointer.root),
        bytes=await asyncio.to_thread(folder_bytes, checkpointer.root),
        keep_last=checkpointer.keep_last,
        keep_days=checkpointer.keep_days,
        workspaces=workspaces,
    )


def folder_bytes(root: Path) -> int:
    """The bytes of every file under `root` (0 when it does not exist); a file gone meanwhile counts nothing."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
