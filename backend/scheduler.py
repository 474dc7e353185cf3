"""Fires cron jobs as agent runs.

A due job starts a new session marked `origin="cron"` (or sends its prompt into the job's
target session); a job whose previous run is still active is skipped, never run twice at once.
Each job is advanced before its run starts, so a crash in between loses that run rather than
repeating it: an agent run has side effects, and at-most-once is the safer failure.

`tick(now)` does one round and is what tests drive with an injected clock. `start()` runs the
loop: tick, then wait for the next due time or a `wake()` (jobs changed), bounded so that a
suspended laptop or a changed clock is noticed within `MAX_WAIT` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from backend.agents import Agents
from backend.engine.workspaces import WorkspaceRoots
from backend.domain.errors import BadRequest, NotFound
from backend.domain.models import ACTIVE_STATUSES, Message, Session, utcnow
from backend.domain.session_options import SessionOptions
from backend.domain.schedules import SKIPPED_STILL_ACTIVE, Schedule, ScheduleCreate, ScheduleUpdate
from backend.paths import existing_directory
from backend.routing import route
from backend.scheduling import new_schedule, parsed_schedule_of, resumed_schedule, updated_schedule
from backend.store.base import Store

log = logging.getLogger(__name__)

MAX_WAIT = 60.0
"""Longest the loop sleeps without looking at the store again."""
ERROR_BACKOFF = 5.0
WATCH_TIMEOUT = 24 * 3600.0
"""How long a run's result is awaited in the background; a longer run is read at the next start."""
RESULT_CHARS = 300

FireOutcome = Literal["started", "sent", "skipped", "error"]


class Runs(Protocol):
    """What the scheduler needs of the session runner."""

    async def create(
        self, *, options: SessionOptions | None = None, prompt: str | None = None
    ) -> Session: ...
    async def send(self, session_id: str, content: str) -> Message: ...
    async def wait(self, session_id: str, timeout: float | None = None) -> Session: ...
    def is_running(self, session_id: str) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class Fired:
    """What one firing of a job did."""

    schedule_id: str
    outcome: FireOutcome
    session_id: str | None = None
    detail: str = ""


class Scheduler:
    """Keeps cron jobs in the store and fires the due ones through the session runner."""

    def __init__(
        self,
        store: Store,
        runner: Runs,
        clock: Callable[[], datetime] = utcnow,
        catch_up: bool = True,
        agents: Agents | None = None,
        workspaces: WorkspaceRoots | None = None,
    ) -> None:
        """`agents`: the named agents and routes a job's new sessions go to (issue 19).
        `workspaces`: where a job's sessions may work, checked when the job is saved too."""
        self.agents = agents
        self.workspaces = workspaces
        self.store = store
        self.runner = runner
        self.clock = clock
        self.catch_up = catch_up
        # One lock for every read-change-write of a job: firing, the API, and run results.
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._watchers: set[asyncio.Task[None]] = set()

    # changes made through the API (each wakes the loop, since the next due time may move)

    async def jobs(self) -> list[Schedule]:
        """Every job, as stored."""
        return await self.store.list_schedules()

    async def job(self, schedule_id: str) -> Schedule:
        """One job, as stored (NotFound for no such job)."""
        return await self.store.get_schedule(schedule_id)

    async def create(self, body: ScheduleCreate) -> Schedule:
        """Validate and save a new job (ValueError for a bad schedule, zone, session or workspace)."""
        await self._check_targets(body.session_id, body.workspace)
        if body.agent is None and body.created_by_session is not None:
            # A job an agent schedules for itself runs as that agent, never as another one.
            with contextlib.suppress(NotFound):
                creator = await self.store.get_session(body.created_by_session)
                body = body.model_copy(update={"agent": creator.agent_id})
        self._check_agent(body.agent)
        job = await self.store.save_schedule(new_schedule(body, now=self.clock()))
        self.wake()
        return job

    async def update(self, schedule_id: str, body: ScheduleUpdate) -> Schedule:
        """Apply the given fields; a new schedule or time zone restarts the job's timing."""
        await self._check_targets(body.session_id, body.workspace)
        self._check_agent(body.agent)
        return await self._change(schedule_id, lambda job, now: updated_schedule(job, body, now=now))

    def _check_agent(self, agent: str | None) -> None:
        if agent is not None and self.agents is not None:
            self.agents.get(agent)  # UnknownAgent names the agents there are

    async def _check_targets(self, session_id: str | None, workspace: str | None) -> None:
        if session_id is not None:
            try:
                await self.store.get_session(session_id)
            except NotFound:
                raise BadRequest(f"no session {session_id!r} to send the prompt to") from None
        if workspace is not None and existing_directory(workspace) is None:
            raise BadRequest(f"workspace {workspace} is not a directory")
        if workspace is not None and self.workspaces is not None:
            self.workspaces.check(workspace)  # WorkspaceRefused says why

    async def pause(self, schedule_id: str) -> Schedule:
        """Stop firing the job (a run in progress goes on); pausing a paused job changes nothing."""

        def pause(job: Schedule, now: datetime) -> Schedule:
            if job.status != "active":
                return job
            return job.model_copy(update={"status": "paused", "next_run_at": None, "updated_at": now})

        return await self._change(schedule_id, pause)

    async def resume(self, schedule_id: str) -> Schedule:
        """Fire the job again from its next time after now (missed times while paused do not run)."""
        return await self._change(
            schedule_id, lambda job, now: job if job.status == "active" else resumed_schedule(job, now=now)
        )

    async def delete(self, schedule_id: str) -> None:
        """Forget the job; a run in progress goes on as an ordinary session."""
        async with self._lock:
            await self.store.delete_schedule(schedule_id)
        self.wake()

    async def run_now(self, schedule_id: str) -> Fired:
        """Fire the job at once, whatever its status, without moving its next run."""
        async with self._lock:
            job = await self.store.get_schedule(schedule_id)
            return await self._fire(job, self.clock())

    async def _change(self, schedule_id: str, change: Callable[[Schedule, datetime], Schedule]) -> Schedule:
        async with self._lock:
            job = change(await self.store.get_schedule(schedule_id), self.clock())
            await self.store.save_schedule(job)
        self.wake()
        return job

    # firing

    async def tick(self, now: datetime | None = None) -> list[Fired]:
        """Fire every job due at `now` (default: the clock) and return what each firing did."""
        now = now or self.clock()
        fired = []
        async with self._lock:
            for job in await self.store.due_schedules(now):
                try:
                    advanced = self._advanced(job, now)
                except ValueError as exc:
                    # A stored schedule that no longer parses (its zone left tzdata) would stay due
                    # for ever; it is paused with the reason instead.
                    await self._record(
                        job, now, status="paused", next_run_at=None, last_status="error", last_result=str(exc)
                    )
                    continue
                try:
                    # Another process on the same database may have fired it already.
                    if await self.store.claim_schedule(job, advanced):
                        fired.append(await self._fire(advanced, now))
                except Exception:
                    # One broken job must not stop the others; it has been advanced already.
                    log.exception("schedule %s failed to fire", job.id)
        return fired

    async def _fire(self, job: Schedule, now: datetime) -> Fired:
        """Start the job's run (it has been advanced already), or record why it did not start."""
        if await self._run_active(job):
            await self._record(job, now, last_status="skipped", last_result=SKIPPED_STILL_ACTIVE)
            return Fired(schedule_id=job.id, outcome="skipped", detail=SKIPPED_STILL_ACTIVE)
        outcome: FireOutcome
        try:
            if job.session_id is not None:
                await self.runner.send(job.session_id, job.prompt)
                session_id, outcome = job.session_id, "sent"
            else:
                session = await self.runner.create(
                    prompt=job.prompt,
                    options=SessionOptions(
                        title=job.name,
                        mode=job.mode,
                        workspace=job.workspace,
                        agent=(
                            route(self.agents.routes, channel="cron", named=job.agent) if self.agents else job.agent
                        ),
                        origin="cron",
                        schedule_id=job.id,
                    ),
                )
                session_id, outcome = session.id, "started"
        except (NotFound, ValueError) as exc:
            detail = str(exc).strip("'\"")
            await self._record(job, now, last_status="error", last_result=detail, last_run_at=now)
            return Fired(schedule_id=job.id, outcome="error", detail=detail)
        await self._record(
            job,
            now,
            last_status="running",
            last_result=None,
            last_run_at=now,
            last_session_id=session_id,
            run_count=job.run_count + 1,
        )
        self._watch(job.id, session_id)
        return Fired(schedule_id=job.id, outcome=outcome, session_id=session_id)

    def _advanced(self, job: Schedule, now: datetime) -> Schedule:
        """The job moved past `now`: its next time, or done for a one-shot."""
        next_run = parsed_schedule_of(job).next_after(now, anchor=job.anchor_at)
        if job.kind == "once" or next_run is None:
            return job.model_copy(update={"status": "done", "next_run_at": None, "updated_at": now})
        return job.model_copy(update={"next_run_at": next_run, "updated_at": now})

    async def _run_active(self, job: Schedule) -> bool:
        """Whether the session the job would run in (its target, or its last run's) is still working."""
        session_id = job.session_id or job.last_session_id
        if session_id is None:
            return False
        if self.runner.is_running(session_id):
            return True
        try:
            return (await self.store.get_session(session_id)).status in ACTIVE_STATUSES
        except NotFound:
            return False

    async def _record(self, job: Schedule, now: datetime, **changes: object) -> Schedule:
        return await self.store.save_schedule(job.model_copy(update={**changes, "updated_at": now}))

    # results of runs

    def _watch(self, schedule_id: str, session_id: str) -> None:
        task = asyncio.create_task(self._await_result(schedule_id, session_id), name=f"cron-watch-{schedule_id}")
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    async def _await_result(self, schedule_id: str, session_id: str) -> None:
        try:
            await self.runner.wait(session_id, timeout=WATCH_TIMEOUT)
        except TimeoutError:
            return
        except NotFound:
            pass
        except asyncio.CancelledError:
            # The run was stopped (its task cancelled), which is a result; our own cancellation is not.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        try:
            await self._record_result(schedule_id, session_id)
        except Exception:
            log.exception("recording the result of schedule %s failed", schedule_id)

    async def _record_result(self, schedule_id: str, session_id: str) -> None:
        """Copy the run's outcome onto the job, unless the job has moved on to another run."""
        try:
            session = await self.store.get_session(session_id)
            status, result = session.status, await self._excerpt(session)
        except NotFound:
            status, result = "error", "the run's session was deleted"
        if status in ACTIVE_STATUSES:
            return
        async with self._lock:
            try:
                job = await self.store.get_schedule(schedule_id)
            except NotFound:
                return
            # Another run (of this job, or into its target session) has begun: its watcher reports.
            if job.last_session_id != session_id or self.runner.is_running(session_id):
                return
            run_status = status if status in ("completed", "stopped", "error") else "completed"
            await self._record(job, self.clock(), last_status=run_status, last_result=result)

    async def _excerpt(self, session: Session) -> str | None:
        if session.error:
            return _shorten(session.error)
        for message in reversed(await self.store.list_messages(session.id)):
            if message.role == "assistant" and message.content.strip():
                return _shorten(message.content)
        return None

    async def drain(self, timeout: float = 30) -> None:
        """Wait (bounded) until every run started so far has its result recorded."""
        async with asyncio.timeout(timeout):
            while self._watchers:
                await asyncio.wait(set(self._watchers))

    # start-up and the loop

    async def recover(self, now: datetime | None = None) -> list[str]:
        """After a restart: watch runs still going, record ones that ended, and handle missed jobs.

        A job whose next run passed while the host was down runs once at the next tick (not once
        per missed time) when `catch_up` is on; otherwise it just moves to its next time. Returns
        the ids of the jobs that had missed a run.
        """
        now = now or self.clock()
        missed = []
        for job in await self.store.list_schedules():
            # A run the previous process was watching (a skip may have been noted since).
            if job.last_status in ("running", "skipped") and job.last_session_id:
                self._watch(job.id, job.last_session_id)
            if job.status != "active" or job.next_run_at is None or job.next_run_at > now:
                continue
            missed.append(job.id)
            if not self.catch_up:
                note = f"missed while the host was down (due {job.next_run_at.isoformat()})"
                async with self._lock:
                    current = await self.store.get_schedule(job.id)
                    await self._record(self._advanced(current, now), now, last_status="missed", last_result=note)
        return missed

    async def start(self) -> None:
        """Recover, then run the loop in the background until `aclose()`."""
        await self.recover()
        self._loop_task = asyncio.create_task(self._loop(), name="scheduler")

    def wake(self) -> None:
        """Look at the jobs again now (they changed)."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            # Cleared before the tick, so a wake() during the tick is not lost.
            self._wake.clear()
            delay = MAX_WAIT
            try:
                await self.tick()
                upcoming = await self.store.next_schedule_time()
                if upcoming is not None:
                    delay = min(MAX_WAIT, max(0.0, (upcoming - self.clock()).total_seconds()))
            except Exception:
                log.exception("scheduler tick failed")
                delay = ERROR_BACKOFF
            try:
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def aclose(self) -> None:
        """Stop the loop and the result watchers; runs themselves belong to the runner."""
        tasks = [t for t in [self._loop_task, *self._watchers] if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        self._loop_task = None


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"
