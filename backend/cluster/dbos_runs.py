"""Session runs as DBOS workflows on a shared Postgres: placed on hosts by a queue, recovered by DBOS.

With `database_url`, a run is the workflow `run_session(session_id)`, enqueued on one DBOS queue
that every host takes from, at most `max_runs_per_host` at a time per host. DBOS keeps its
tables in its own schema (`dbos`) of Overseer's database; its executor id is the host id, and its
application version is Overseer's version plus the store's schema version, so a new release never
replays the runs of an old one.

The checkpoint is the run, not each step. The store already holds every message, tool call and
approval before and after it happens, and the runner resumes from it by rules of its own (a tool
running at a crash is reported interrupted and never re-run; a pending approval is asked again
under its old id). A replayed workflow therefore just drives the runner again: DBOS steps for
model and tool calls would record the same facts a second time, and a replay that skipped them
by position would disagree with a store that has moved on since.

A host that loses its database lock (its watch connection cut) fences itself: its runs are
cancelled as in a shutdown (their workflows stay pending, for whoever recovers them), it takes
no run from the queue, and once it holds its lock again it hands back its own pending runs and
takes work again (backend.cluster.host_fence).

A run left pending by another release is not replayed, and would hold its session forever: a
host places it again in its own release once nobody can be running it (its host is gone, or is
this host itself, upgraded in place); the old workflow is cancelled and the new run resumes from
the store like any recovered run. A live host of another release keeps its runs.

One session has at most one run placed at a time: the workflow's deduplication id is the session
id, so a second `place` while a run is queued or going finds that run, which looks for new
messages before it ends.

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import uuid
from dataclasses import dataclass, field
from typing import Any
from importlib.metadata import PackageNotFoundError, version

from dbos import DBOS, DBOSConfig, SetEnqueueOptions, SetWorkflowID
from dbos._error import DBOSQueueDeduplicatedError

from backend.domain.models import ACTIVE_STATUSES
from backend.cluster.host_fence import DequeueFence
from backend.cluster.host_watch import HostWatch
from backend.engine.runner import SessionRunner
from backend.store.postgres_schema import SCHEMA_VERSION

log = logging.getLogger(__name__)

APP_NAME = "overseer"
QUEUE_NAME = "overseer_runs"
WORKFLOW_NAME = "overseer.run_session"
QUEUE_POLL_SECONDS = 0.1
"""How often each host looks for a run to take: a placed run starts within about this long."""
WAIT_POLL_SECONDS = (0.05, 0.5)
"""`wait_elsewhere` reads the session row this often, backing off from the first to the second."""


APP_VERSION_ENV = "OVERSEER_APP_VERSION"
"""Overrides the application version (tests play two releases with it); unset or empty: derived."""


def application_version() -> str:
    """Overseer's version and the store's schema version: what a replay must agree with."""
    if override := os.environ.get(APP_VERSION_ENV):
        return override
    try:
        overseer = version("overseer")
    except PackageNotFoundError:  # a source tree not installed: the schema still tells releases apart
        overseer = "source"
    return f"{overseer}+schema{SCHEMA_VERSION}"


_placement: DbosPlacement | None = None
"""This process's placement. DBOS is one instance per process, so its workflow finds it here."""


@DBOS.workflow(name=WORKFLOW_NAME)
async def run_session(session_id: str) -> str:
    """Drive the session's run on the host that took it from the queue, until the run settles."""
    if _placement is None:
        raise RuntimeError("a session run was dequeued before this host's placement started")
    return await _placement.drive(session_id)


@dataclass(kw_only=True)
class DbosPlacement:
    """The placement of a host on a shared Postgres: runs are DBOS workflows on one queue."""

    runner: SessionRunner
    database_url: str
    host_id: str
    max_runs: int
    pool_size: int = 8
    """DBOS's own connections (its default, 20, would let three hosts exhaust a default server)."""
    watch_interval: float = 1.0
    """Seconds between two looks for dead hosts (backend.cluster.host_watch)."""
    app_version: str = field(default_factory=application_version)
    watch: HostWatch | None = None
    fence: DequeueFence = field(default_factory=DequeueFence)
    _followers: set[asyncio.Task[None]] = field(default_factory=set)
    _driving: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    """The runs this host's workflows drive now, by session: what a fence cancels."""
    _closing: bool = False

    @property
    def holds_lock(self) -> bool:
        """Whether this host may run tools now: it holds its database lock (a flag, no round trip)."""
        return not self.fence.fenced

    async def start(self) -> None:
        """Claim the host id, launch DBOS on the running loop, declare the queue, watch for dead hosts.

        DBOS recovers this host's own unfinished runs as it launches (same executor id)."""
        global _placement
        if _placement is not None and _placement is not self:
            raise RuntimeError("DBOS runs one placement per process")
        self.watch = HostWatch(
            url=self.database_url,
            host_id=self.host_id,
            queue_name=QUEUE_NAME,
            app_version=self.app_version,
            interval=self.watch_interval,
        )
        await self.watch.claim()
        config: DBOSConfig = {
            "name": APP_NAME,
            "system_database_url": self.database_url,
            "application_version": self.app_version,
            "executor_id": self.host_id,
            "sys_db_pool_size": self.pool_size,
            "log_level": "WARNING",
        }
        _placement = self
        try:
            DBOS(config=config)
            # On this loop's thread: DBOS runs async workflows on the loop that launched it.
            DBOS.launch()
            self.fence.install(_dbos_instance()._sys_db)
            await DBOS.register_queue_async(
                QUEUE_NAME,
                worker_concurrency=self.max_runs,
                polling_interval_sec=QUEUE_POLL_SECONDS,
                on_conflict="always_update",
            )
        except BaseException:
            await self.aclose()
            raise
        # Before taking part: runs an older release of this host (or a gone one) left pending.
        try:
            await self.watch.recover_dead(self._recover_host, self._replace_old_release)
        except Exception:
            log.exception("looking for runs left by dead hosts or other releases failed")
        self.watch.start(
            recover=self._recover_host,
            replace=self._replace_old_release,
            on_lost=self._fence_runs,
            on_regained=self._take_work_again,
        )

    async def aclose(self) -> None:
        """After the runner's own close: its runs were cancelled as a shutdown, so their workflows
        stay pending, for this host's next start (or another host) to recover."""
        global _placement
        self._closing = True
        for follower in list(self._followers):
            follower.cancel()
        if self.watch is not None:
            await self.watch.aclose()
            self.watch = None
        if _placement is self:
            # In a thread: DBOS joins its threads, which may be handing a workflow to this loop.
            await asyncio.to_thread(DBOS.destroy, workflow_completion_timeout_sec=0)
            _placement = None

    # the Placement protocol

    async def place(self, session_id: str) -> None:
        # A fresh context: a run placed from inside another run (a sub-agent) is not a DBOS child.
        await asyncio.create_task(self._enqueue(session_id), context=contextvars.Context())

    async def _enqueue(self, session_id: str) -> None:
        try:
            with SetWorkflowID(f"{session_id}.{uuid.uuid4().hex[:12]}"), SetEnqueueOptions(deduplication_id=session_id):
                await DBOS.enqueue_workflow_async(QUEUE_NAME, run_session, session_id)
        except DBOSQueueDeduplicatedError:
            # A run is queued or going: it reads the new message before it ends (drive). One that
            # was ending already (stopped, or past its last look) would leave it unread: follow it.
            follower = asyncio.create_task(self._follow(session_id), name=f"follow-{session_id}")
            self._followers.add(follower)
            follower.add_done_callback(self._followers.discard)

    async def _follow(self, session_id: str) -> None:
        """Once the run holding the session has ended, place another if a message is still unanswered."""
        for holder in await self._placed(session_id):
            with contextlib.suppress(Exception):  # how it ended does not matter, only that it did
                await (await DBOS.retrieve_workflow_async(holder.workflow_id)).get_result(
                    polling_interval_sec=WAIT_POLL_SECONDS[0]
                )
        if await self._placed(session_id):
            return  # placed again meanwhile (by a later message): that run reads it
        history = await self.runner.store.list_messages(session_id)
        if history and history[-1].role == "user":
            await self.runner.mark_running(session_id)
            await self._enqueue(session_id)

    async def _placed(self, session_id: str) -> list[Any]:
        """The session's workflows queued or going (at most one: the session is their deduplication id)."""
        return await DBOS.list_workflows_async(
            workflow_id_prefix=f"{session_id}.",
            status=["ENQUEUED", "PENDING"],
            load_input=False,
            load_output=False,
        )

    async def may_recover(self, session_id: str) -> bool:
        # A workflow queued or pending holds the session: this host's own (DBOS recovers it as it
        # launches), a live host's, or a dead host's (its watcher recovers it).
        return not await self._placed(session_id)

    async def wait_elsewhere(self, session_id: str, timeout: float | None) -> None:
        async with asyncio.timeout(timeout):
            delay, longest = WAIT_POLL_SECONDS
            while (await self.runner.store.get_session(session_id)).status in ACTIVE_STATUSES:
                if self.runner.is_running(session_id):  # taken by this host meanwhile
                    await asyncio.shield(self.runner.run_here(session_id))
                    continue
                await asyncio.sleep(delay)
                delay = min(delay * 2, longest)

    # the workflow's body

    async def drive(self, session_id: str) -> str:
        """Run the session here until it settles; the session's status as it ended."""
        if not self.fence.may_start(DBOS.workflow_id or ""):
            raise asyncio.CancelledError  # fenced, or handed back meanwhile: stays pending for recovery
        while True:
            if self.fence.fenced:
                raise asyncio.CancelledError
            task = self.runner.run_here(session_id, context=contextvars.Context())
            self._driving[session_id] = task
            try:
                await asyncio.wait({task})
            finally:
                if self._driving.get(session_id) is task:
                    del self._driving[session_id]
            if task.cancelled():
                if self.runner.gate.shutting_down:
                    # A shutdown, not a stop: the workflow stays pending, to be recovered.
                    raise asyncio.CancelledError
                return "stopped"
            session = await self.runner.store.get_session(session_id)
            if session.status in ("error", "stopped"):
                return session.status
            # A message sent while the run was ending found this workflow holding the session
            # (its `place` was deduplicated): this workflow runs it.
            history = await self.runner.store.list_messages(session_id)
            if not history or history[-1].role != "user":
                return session.status
            await self.runner.mark_running(session_id)

    async def _fence_runs(self) -> None:
        """This host lost its lock: stop its runs as a shutdown does and take no more."""
        self.fence.close()
        self.runner.gate.shutting_down = True  # cancelled calls stay as stored, for the recovering host
        runs = [task for task in self._driving.values() if not task.done()]
        for task in runs:
            task.cancel()
        # Not waiting for them to end: the watch claims the lock back at once, which keeps other
        # hosts from recovering these runs while they are still ending here.
        log.error("host %s fenced: %d runs left to recovery, none taken until it holds its lock", self.host_id, len(runs))

    async def _take_work_again(self) -> None:
        """Holding the lock again: hand back this host's own pending runs, then take from the queue."""
        await self.fence.drain()
        # Handing back a run still ending here would run it twice: wait, however long it takes.
        while runs := [task for task in self._driving.values() if not task.done()]:
            _, ending = await asyncio.wait(runs, timeout=10)
            if ending:
                log.error("host %s: %d fenced runs have not ended yet; taking no work until they do",
                          self.host_id, len(ending))
        handles = await asyncio.to_thread(DBOS._recover_pending_workflows, [self.host_id])
        self.fence.reopen()
        if not self._closing:
            self.runner.gate.shutting_down = False
        log.warning("host %s takes work again; %d of its runs handed back to the queue", self.host_id, len(handles))

    async def _replace_old_release(self, workflow_ids: list[str]) -> list[str]:
        """Cancel workflows of another release nobody runs, and place their active sessions in this one."""
        placed = []
        for workflow_id in workflow_ids:
            session_id = workflow_id.split(".", 1)[0]
            await DBOS.cancel_workflow_async(workflow_id)  # frees the session (its deduplication id)
            try:
                session = await self.runner.store.get_session(session_id)
            except KeyError:
                continue  # deleted since
            if session.status not in ACTIVE_STATUSES:
                continue
            await self._enqueue(session_id)
            await self.runner.bus.publish(
                session_id, "session.recovered", {"from_release": workflow_id, "by_host": self.host_id}
            )
            placed.append(session_id)
        return placed

    async def _recover_host(self, dead_host: str) -> list[str]:
        """Hand a dead host's unfinished runs back to the queue (the watcher calls this once per death)."""
        handles = await asyncio.to_thread(DBOS._recover_pending_workflows, [dead_host])
        sessions = [h.workflow_id.split(".", 1)[0] for h in handles]
        for session_id in sessions:
            await self.runner.bus.publish(
                session_id, "session.recovered", {"from_host": dead_host, "by_host": self.host_id}
            )
        return sessions


def _dbos_instance() -> Any:
    """This process's DBOS (its system database is what the fence wraps)."""
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()
