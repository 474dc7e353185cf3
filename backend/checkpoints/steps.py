"""A checkpoint before every step that may change the workspace (issue 32), and their retention.

The gate calls `Checkpointer.before_step` for each allowed call after the allow is recorded and
before the tool starts. Which calls get one (`needs_checkpoint`): the built-in writers
(`write_file`, `edit_file`, the shell's `exec`, the memory tools that write), and every other
tool that is not annotated `readOnlyHint`, unless it is a built-in known to leave the
workspace's files alone (cron jobs live in the store; a sub-agent's own steps are checkpointed
in its own session; the browser's page actions change a tab). Read-only tools get none.

The snapshot runs under the workspace's lock, held in the store (on the loop's own thread when
a few small files changed, `ShadowRepo.snapshot_if_small`, else on a worker thread): on Postgres an
advisory lock, so two hosts never write one shadow repository at once. Its row and its
`checkpoint.created` event are written in one transaction, before the tool starts: with the
step's start (the allow, the running state, `tool.started`) when the gate hands that over.

A checkpoint that cannot be taken never blocks the step, and never fails silently: the step
runs, and its `checkpoint.created` event says "no checkpoint: <why>" (`commit` None), so a
person can see that this step cannot be undone. (Refusing the step instead would let a broken
disk or a full shadow repository stop every agent; the person who allowed the step is told.)
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import functools
import hashlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar


from backend.checkpoints.shadow import ShadowRepo
from backend.checkpoints.usage import CheckpointUsage, measure_usage
from backend.checkpoints.values import Snapshot
from backend.domain.checkpoints import Checkpoint
from backend.domain.errors import NotFound
from backend.domain.models import Event, utcnow
from backend.domain.publisher import EventPublisher
from backend.domain.tools import ToolAnnotations
from backend.paths import private_dir
from backend.store.base import Store, Written
from backend.store.ready import then

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_COUNTED_SESSIONS = 10_000
"""Sessions whose next checkpoint number is kept in memory; past it, all are asked for again."""

WRITERS = frozenset(
    {
        "mcp__file__write_file",
        "mcp__file__edit_file",
        "mcp__shell__exec",
        "mcp__memory__memory_save",
        "mcp__memory__memory_forget",
    }
)
"""Built-in tools that change the workspace: checkpointed whatever their annotations say."""

LEAVES_FILES_ALONE = (
    "mcp__cron__*",
    "mcp__invoke_agent__*",
    "mcp__browser__navigate",
    "mcp__browser__back",
    "mcp__browser__forward",
    "mcp__browser__click",
    "mcp__browser__type_text",
    "mcp__browser__press",
    "mcp__browser__select",
    "mcp__browser__tabs",
    "mcp__browser__evaluate",
)
"""Built-in tools that write, but not the workspace's files (the browser's screenshot does: it is
not here). Third-party servers cannot take these names (settings refuse a built-in's name)."""


def needs_checkpoint(tool_name: str, annotations: ToolAnnotations | None) -> bool:
    """Whether a call of this tool may change the workspace, and so gets a checkpoint before it."""
    if tool_name in WRITERS:
        return True
    if any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in LEAVES_FILES_ALONE):
        return False
    return not (annotations is not None and annotations.readOnlyHint is True)




StepStart = Callable[[Checkpoint | None, dict[str, Any] | None], Awaitable[None]]
"""Writes a step's start; given a checkpoint, its row and `checkpoint.created` event too (see
`Checkpointer.before_step`)."""


def real_workspace(workspace: Path | str) -> Path:
    """The workspace's real path: one shadow repository and one lock per folder, however it is named."""
    return Path(os.path.realpath(Path(workspace).expanduser()))


def lock_key(workspace: Path | str) -> str:
    """The workspace's lock name in the store: a hash of its real path."""
    return _key_of(real_workspace(workspace))


@functools.lru_cache(maxsize=1024)
def _key_of(real: Path) -> str:
    return hashlib.sha256(str(real).encode()).hexdigest()[:32]


class Checkpointer:
    """Takes the checkpoint before each step, keeps the shadow repositories, prunes them."""

    def __init__(
        self,
        *,
        store: Store,
        bus: EventPublisher,
        root: Path,
        enabled: bool = True,
        max_file_bytes: int = 5 * 1024 * 1024,
        keep_last: int = 100,
        keep_days: float = 30,
        lock_timeout: float = 60.0,
        prune_interval: float = 3600.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`root`: the folder of every workspace's shadow repository (settings.checkpoints_dir).
        `keep_last`, `keep_days`: a workspace keeps its last `keep_last` checkpoints, none older
        than `keep_days` days, and every checkpoint of a session still running.
        `lock_timeout`: the longest wait for a workspace's lock, past which the step runs
        without a checkpoint (and says so)."""
        self.store = store
        self.bus = bus
        self.root = root
        self.enabled = enabled
        self.max_file_bytes = max_file_bytes
        self.keep_last = keep_last
        self.keep_days = keep_days
        self.lock_timeout = lock_timeout
        self.prune_interval = prune_interval
        self.clock = clock
        self._shadows: dict[Path, ShadowRepo] = {}
        self._pruning: dict[Path, asyncio.Task[int]] = {}
        self._counts: dict[Path, int] = {}
        self._prune_at: dict[Path, int] = {}
        """Checkpoints per workspace as this host last counted them (its own since added): retention
        after a checkpoint runs only past `keep_last` (the periodic sweep sees the others' too)."""
        self._sweeper: asyncio.Task[None] | None = None
        self._reals: dict[str, tuple[Path, tuple[int, int]]] = {}
        self._next_steps: dict[str, int] = {}
        """The number of each session's next checkpoint as this host counted it: a query a step
        fewer. A number taken meanwhile by another writer is refused by the store's key, and
        then asked for (`_take`)."""

    # the shadow repositories and their lock

    def _real_of(self, workspace: Path) -> Path:
        """`real_workspace`, remembered per name while the name still leads to the same folder
        (one stat instead of an lstat per folder of the path, every step)."""
        name = str(workspace)
        try:
            info = os.stat(name)
        except OSError:
            return real_workspace(workspace)
        known = self._reals.get(name)
        if known is not None and known[1] == (info.st_dev, info.st_ino):
            return known[0]
        real = real_workspace(workspace)
        self._reals[name] = (real, (info.st_dev, info.st_ino))
        return real

    async def shadow_for(self, workspace: Path) -> ShadowRepo:
        """The workspace's shadow repository (made on a thread the first time)."""
        return await self._shadow_of(real_workspace(workspace))

    async def _shadow_of(self, real: Path) -> ShadowRepo:
        shadow = self._shadows.get(real)
        if shadow is None:
            await asyncio.to_thread(private_dir, self.root)  # owner-only: the workspace's every byte is in there
            shadow = await asyncio.to_thread(ShadowRepo, real, root=self.root, max_file_bytes=self.max_file_bytes)
            shadow = self._shadows.setdefault(real, shadow)
        return shadow

    @asynccontextmanager
    async def locked(self, workspace: Path | str) -> AsyncIterator[None]:
        """Hold the workspace's lock (every host of the store): only its holder writes the shadow
        repository. WorkspaceBusy past `lock_timeout`."""
        async with self._locked_real(real_workspace(workspace)):
            yield

    def _locked_real(self, real: Path) -> contextlib.AbstractAsyncContextManager[None]:
        return self.store.workspace_lock(_key_of(real), timeout=self.lock_timeout)

    # before a step

    async def before_step(
        self,
        *,
        session_id: str,
        workspace: Path,
        call_id: str,
        tool_name: str,
        annotations: ToolAnnotations | None,
        start: StepStart | None = None,
    ) -> Checkpoint | None:
        """The checkpoint of the workspace before this call, stored with its event; None when the
        call gets none (read-only, checkpoints off) or none could be taken (its event says why).

        `start`, when given, writes the step's start: it is called once, with the checkpoint
        and its `checkpoint.created` data while the workspace's lock is held (it must store the
        row and that event, with its own, in one transaction), or with (None, None) when there
        is none, before a failure is said. Its errors are the caller's: they propagate.

        Never raises but for a cancellation or `start`'s error: the step runs either way. A
        cancellation does not cut a snapshot short (a worker's is waited for before the lock is
        let go); one that lands after the snapshot, before its row, leaves a snapshot no row
        names, which the next prune drops, and the step it was for does not run.
        """
        if not self.enabled or not needs_checkpoint(tool_name, annotations):
            if start is not None:
                await start(None, None)
            return None
        real = self._real_of(workspace)
        began = False

        async def starting(checkpoint: Checkpoint | None, data: dict[str, Any] | None) -> None:
            nonlocal began
            began = True
            assert start is not None
            await start(checkpoint, data)

        try:
            # Awaited, not wrapped in a task: with SQLite and a few files changed nothing here
            # yields to the loop, and a task's rounds of it cost a step more than the rest.
            checkpoint = await self._take(session_id, real, call_id, tool_name, starting if start is not None else None)
        except Exception as exc:
            if began:
                raise
            log.warning("no checkpoint before %s (%s) in %s: %s", tool_name, call_id, workspace, exc)
            if start is not None:
                await start(None, None)
            await self._tell_none(session_id, call_id, tool_name, exc)
            return None
        self._prune_soon(real)
        return checkpoint

    async def _take(
        self, session_id: str, real: Path, call_id: str, tool_name: str, start: StepStart | None
    ) -> Checkpoint:
        async with self._locked_real(real):
            shadow = await self._shadow_of(real)
            snapshot = shadow.snapshot_if_small() or await _whole(asyncio.to_thread(shadow.snapshot))
            step = self._next_steps.pop(session_id, None) or await self.store.next_checkpoint_step(session_id)
            try:
                checkpoint = await self._write(session_id, step, real, call_id, tool_name, snapshot, start)
            except Exception:
                # The number this host counted to may have been taken meanwhile (a rewind, from
                # the CLI or another host): then the key refused the whole write, and it is
                # written once more under the store's own next number.
                if not await self._taken_by_another(session_id, step, call_id):
                    raise
                step = await self.store.next_checkpoint_step(session_id)
                checkpoint = await self._write(session_id, step, real, call_id, tool_name, snapshot, start)
            if len(self._next_steps) >= MAX_COUNTED_SESSIONS:
                self._next_steps.clear()
            self._next_steps[session_id] = step + 1
            return checkpoint

    async def _write(
        self,
        session_id: str,
        step: int,
        real: Path,
        call_id: str,
        tool_name: str,
        snapshot: Snapshot,
        start: StepStart | None,
    ) -> Checkpoint:
        checkpoint = Checkpoint(
            session_id=session_id,
            step=step,
            tool_call_id=call_id,
            tool_name=tool_name,
            kind="step",
            workspace=str(real),
            commit=snapshot.commit,
            created_at=self.clock(),
            skipped=[f"{s.path}: {s.reason}" for s in snapshot.skipped],
        )
        data = {
            "step": step,
            "id": call_id,
            "name": tool_name,
            "kind": "step",
            "commit": snapshot.commit,
            "skipped": checkpoint.skipped,
        }
        if start is not None:
            await start(checkpoint, data)
        else:
            await self.bus.publish(
                session_id,
                "checkpoint.created",
                data,
                persist=lambda event: then(self.store.add_checkpoint(checkpoint, event=event), _event_of),
            )
        return checkpoint

    async def _taken_by_another(self, session_id: str, step: int, call_id: str) -> bool:
        try:
            held = await self.store.get_checkpoint(session_id, step)
        except NotFound:
            return False
        return held.tool_call_id != call_id

    def forget_steps(self, session_id: str) -> None:
        """Another writer numbers a checkpoint of this session (a rewind): its next step asks the
        store for its number."""
        self._next_steps.pop(session_id, None)

    async def _tell_none(self, session_id: str, call_id: str, tool_name: str, exc: Exception) -> None:
        why = str(exc) or type(exc).__name__
        data = {
            "step": None,
            "id": call_id,
            "name": tool_name,
            "kind": "step",
            "commit": None,
            "skipped": [],
            "error": f"no checkpoint: {why}",
        }
        try:
            await self.bus.publish(session_id, "checkpoint.created", data)
        except Exception:  # the store itself is failing: the log is all that is left
            log.exception("could not record that %s (%s) ran without a checkpoint", tool_name, call_id)

    # retention

    async def prune(self, workspace: Path | str, *, collect: bool = True) -> int:
        """Apply retention to one workspace: keep its last `keep_last` checkpoints, none older than
        `keep_days`, and every checkpoint of a session still running or waiting (it may rewind to
        any of them). The rows go first; with `collect`, then every snapshot in the shadow
        repository that no row names (dropped by earlier prunes without `collect` too), and the
        objects only they reached. Under the workspace's lock, so no checkpoint taken meanwhile
        is lost. How many rows were pruned."""
        real = real_workspace(workspace)
        async with self.locked(real):
            cutoff = self.clock() - timedelta(days=self.keep_days)
            checkpoints = await self.store.retained_checkpoints(str(real), before=cutoff)
            beyond = len(checkpoints) - self.keep_last
            doomed = [cp for i, cp in enumerate(checkpoints) if (i < beyond or cp.old) and not cp.active]
            self._counts[real] = len(checkpoints) - len(doomed)
            # Running sessions keep theirs: the next prune after a step waits for a fifth more
            # than keep_last and half more than what stays, or it would come after every step of
            # a long session (or of many sessions at once: a prune reads every row of the
            # workspace, so its cost must be spread over steps in proportion).
            slack = max(10, self.keep_last // 5, self._counts[real] // 2)
            self._prune_at[real] = max(self.keep_last, self._counts[real]) + slack
            if doomed:
                await self.store.delete_checkpoints(doomed)
            if collect and real.is_dir():
                gone = {(cp.session_id, cp.step) for cp in doomed}
                kept = [cp.commit for cp in checkpoints if (cp.session_id, cp.step) not in gone]
                shadow = await self.shadow_for(real)
                await asyncio.to_thread(shadow.prune, kept)
            return len(doomed)

    async def prune_all(self) -> int:
        """Retention for every workspace that has checkpoints; one that fails is logged and skipped."""
        pruned = 0
        for workspace in await self.store.checkpoint_workspaces():
            try:
                pruned += await self.prune(workspace)
            except Exception:
                log.exception("pruning the checkpoints of %s failed", workspace)
        return pruned

    def _prune_soon(self, real: Path) -> None:
        """After a checkpoint, retention of its workspace's rows in the background (one at a time
        per workspace), once it holds a fifth more (at least 10) than `keep_last` or than the last
        prune left: pruning costs a walk of the store's rows, so it is done for many checkpoints
        at once, not after each. The shadow repository is left alone: its snapshots no row names,
        and their objects, go at the periodic sweep (a rewind goes through the rows)."""
        counted = self._counts.get(real)
        if counted is not None:
            self._counts[real] = counted + 1
            if counted + 1 <= self._prune_at.get(real, 0):
                return
        running = self._pruning.get(real)
        if running is not None and not running.done():
            return
        task = asyncio.create_task(self.prune(real, collect=False), name=f"checkpoints-prune-{_key_of(real)[:8]}")
        self._pruning[real] = task
        task.add_done_callback(_log_failure)

    async def start(self) -> None:
        """Make the checkpoints folder, then prune every workspace now and every `prune_interval`
        seconds after (what ages past `keep_days`)."""
        if self.enabled:
            # Made now, not at the first checkpoint: a command's sandbox hides only a folder that
            # exists when it starts, and one made under a running command would be open to it.
            try:
                private_dir(self.root)
            except OSError as exc:
                log.warning("cannot make the checkpoints folder %s: %s (each step will say so)", self.root, exc)
        if self.enabled and self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(), name="checkpoints-retention")

    async def _sweep(self) -> None:
        while True:
            await self.prune_all()
            await asyncio.sleep(self.prune_interval)

    async def aclose(self) -> None:
        """Stop the background retention; a prune under way is let finish (it holds the lock briefly)."""
        tasks = [t for t in (self._sweeper, *self._pruning.values()) if t is not None and not t.done()]
        if self._sweeper is not None:
            self._sweeper.cancel()
        self._sweeper = None
        if tasks:
            await asyncio.wait(tasks, timeout=30)
        self._pruning.clear()

    async def usage(self) -> CheckpointUsage:
        """The disk checkpoints take, in all and per workspace (for Settings)."""
        return await measure_usage(self)


async def _whole(work: Awaitable[T]) -> T:
    """`work`'s result; a cancellation waits for it to end first (a thread cannot be stopped,
    and the workspace's lock must not be let go while it still writes the repository)."""
    running = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait([running])
        raise


def _event_of(written: Written) -> Event:
    assert written.event is not None
    return written.event


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("checkpoint retention failed", exc_info=task.exception())
