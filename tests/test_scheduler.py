"""The scheduler (backend/scheduler.py) on a real host with a scripted model and an injected clock.

Time only moves when a test moves it: `tick(now)` fires what is due at that instant, so nothing
here sleeps or waits for a wall-clock minute to pass.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from backend.domain.session_options import SessionOptions
from backend.agents import UnknownAgent
from backend.domain.schedules import SKIPPED_STILL_ACTIVE, ScheduleCreate
from backend.scheduler import Scheduler
from backend.testing import ModelRequest, Reply
from backend.testing.harness import Harness, scripted_host

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


class FakeClock:
    """A clock that stands still until the test moves it."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now


@pytest.fixture
async def harness(tmp_path) -> AsyncIterator[Harness]:
    # The host's own scheduler stays off: each test drives one with its own clock.
    async with scripted_host(tmp_path, builtin_servers=False, scheduler_enabled=False) as h:
        yield h


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def scheduler(harness: Harness, clock: FakeClock) -> AsyncIterator[Scheduler]:
    sched = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    yield sched
    await sched.aclose()


def held(release: threading.Event, text: str):
    """A reply that keeps the run busy until the test sets `release`."""

    def reply(_: ModelRequest) -> Reply:
        release.wait(30)
        return Reply(text=text)

    return reply


def job(schedule: str, prompt: str = "Summarise the news", **fields: object) -> ScheduleCreate:
    return ScheduleCreate(schedule=schedule, prompt=prompt, timezone="UTC", **fields)  # type: ignore[arg-type]


async def test_a_due_cron_job_starts_a_session_marked_as_from_cron_and_records_its_answer(harness, scheduler, clock):
    harness.model.push(Reply(text="Here is the summary."))
    created = await scheduler.create(job("0 9 * * *", name="Morning news", mode="ask"))
    assert created.next_run_at == T0.replace(hour=9)

    assert await scheduler.tick(T0.replace(hour=8, minute=59)) == []
    [fired] = await scheduler.tick(clock.advance(timedelta(hours=1)))
    assert fired.outcome == "started"
    await scheduler.drain()

    session = await harness.host.store.get_session(fired.session_id)
    assert (session.origin, session.schedule_id, session.title, session.mode) == ("cron", created.id, "Morning news", "ask")
    assert session.status == "completed"
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.last_status, stored.last_result, stored.last_session_id) == ("completed", "Here is the summary.", session.id)
    assert (stored.last_run_at, stored.run_count) == (clock.now, 1)
    assert stored.next_run_at == T0.replace(hour=9) + timedelta(days=1)


async def test_an_every_job_fires_when_due_and_moves_to_its_next_interval(harness, scheduler, clock):
    harness.model.push(Reply(text="one"), Reply(text="two"))
    created = await scheduler.create(job("every 10m"))
    assert await scheduler.tick(T0 + timedelta(minutes=9)) == []
    assert len(await scheduler.tick(T0 + timedelta(minutes=10))) == 1
    await scheduler.drain()
    assert (await harness.host.store.get_schedule(created.id)).next_run_at == T0 + timedelta(minutes=20)
    assert len(await scheduler.tick(T0 + timedelta(minutes=21))) == 1
    await scheduler.drain()
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.run_count, stored.last_result, stored.next_run_at) == (2, "two", T0 + timedelta(minutes=30))


async def test_a_one_shot_job_runs_once_and_ends_done(harness, scheduler, clock):
    harness.model.push(Reply(text="reminded"))
    created = await scheduler.create(job("2026-03-02T12:00", "Remind me to stretch"))
    assert created.kind == "once"
    assert len(await scheduler.tick(T0.replace(hour=12))) == 1
    await scheduler.drain()
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.status, stored.next_run_at, stored.last_status) == ("done", None, "completed")
    assert await scheduler.tick(T0 + timedelta(days=30)) == []


async def test_a_job_with_a_target_session_sends_its_prompt_into_that_session(harness, scheduler, clock):
    harness.model.push(Reply(text="hi"), Reply(text="status: green"))
    target = await harness.run("hello")
    created = await scheduler.create(job("every 1h", "What is the build status?", session_id=target.id))
    [fired] = await scheduler.tick(T0 + timedelta(hours=1))
    assert (fired.outcome, fired.session_id) == ("sent", target.id)
    await scheduler.drain()
    messages = await harness.host.store.list_messages(target.id)
    assert [m.content for m in messages] == ["hello", "hi", "What is the build status?", "status: green"]
    assert (await harness.host.store.get_schedule(created.id)).last_result == "status: green"
    assert len(await harness.host.store.list_sessions()) == 1


async def test_a_job_never_runs_twice_at_once_and_the_skip_is_recorded(harness, scheduler, clock):
    release = threading.Event()
    harness.model.push(held(release, "slow answer"))
    created = await scheduler.create(job("every 1m"))
    try:
        [first] = await scheduler.tick(T0 + timedelta(minutes=1))
        [second] = await scheduler.tick(T0 + timedelta(minutes=2))
        assert (first.outcome, second.outcome) == ("started", "skipped")
        stored = await harness.host.store.get_schedule(created.id)
        assert (stored.last_status, stored.last_result) == ("skipped", SKIPPED_STILL_ACTIVE)
        assert stored.next_run_at == T0 + timedelta(minutes=3)
    finally:
        release.set()
    await scheduler.drain()
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.last_status, stored.last_result, stored.run_count) == ("completed", "slow answer", 1)
    assert len(await harness.host.store.list_sessions()) == 1


async def test_a_paused_job_does_not_fire_and_resumes_from_its_next_time_after_now(harness, scheduler, clock):
    created = await scheduler.create(job("every 10m"))
    paused = await scheduler.pause(created.id)
    assert (paused.status, paused.next_run_at) == ("paused", None)
    assert await scheduler.tick(T0 + timedelta(hours=1)) == []
    clock.advance(timedelta(minutes=65))
    resumed = await scheduler.resume(created.id)
    assert (resumed.status, resumed.next_run_at) == ("active", T0 + timedelta(minutes=70))
    assert await harness.host.store.list_sessions() == []


async def test_a_missed_job_runs_once_at_start_up_not_once_per_missed_time(harness, clock):
    harness.model.push(Reply(text="caught up"))
    before = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    created = await before.create(job("every 10m"))
    # The host is down for an hour: six runs are missed.
    after_downtime = clock.advance(timedelta(hours=1, minutes=5))
    restarted = Scheduler(harness.host.store, harness.host.runner, clock=clock, catch_up=True)
    try:
        assert await restarted.recover() == [created.id]
        assert len(await restarted.tick()) == 1
        await restarted.drain()
        assert await restarted.tick() == []
    finally:
        await restarted.aclose()
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.run_count, stored.last_status) == (1, "completed")
    assert stored.next_run_at == after_downtime + timedelta(minutes=5)


async def test_without_catch_up_a_missed_job_is_only_rescheduled(harness, clock):
    before = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    created = await before.create(job("0 9 * * *"))
    clock.advance(timedelta(days=2))
    restarted = Scheduler(harness.host.store, harness.host.runner, clock=clock, catch_up=False)
    assert await restarted.recover() == [created.id]
    assert await restarted.tick() == []
    stored = await harness.host.store.get_schedule(created.id)
    assert stored.last_status == "missed"
    assert stored.next_run_at == T0.replace(hour=9) + timedelta(days=2)
    assert await harness.host.store.list_sessions() == []


async def test_after_a_restart_the_result_of_a_run_that_ended_meanwhile_is_read_from_its_session(harness, clock):
    harness.model.push(Reply(text="finished while nobody watched"))
    before = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    created = await before.create(job("every 1h"))
    [fired] = await before.tick(clock.advance(timedelta(hours=1)))
    await before.aclose()  # the watcher dies with the old process
    await harness.host.runner.wait(fired.session_id, timeout=30)
    assert (await harness.host.store.get_schedule(created.id)).last_status == "running"

    restarted = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    await restarted.recover()
    await restarted.drain()
    stored = await harness.host.store.get_schedule(created.id)
    assert (stored.last_status, stored.last_result) == ("completed", "finished while nobody watched")


async def test_a_run_that_cannot_start_is_recorded_as_an_error_and_the_job_moves_on(harness, scheduler, clock):
    target = await harness.host.runner.create(options=SessionOptions(title="soon gone"))
    created = await scheduler.create(job("every 1h", session_id=target.id))
    await harness.host.store.delete_session(target.id)
    [fired] = await scheduler.tick(T0 + timedelta(hours=1))
    assert fired.outcome == "error"
    stored = await harness.host.store.get_schedule(created.id)
    assert stored.last_status == "error" and target.id in (stored.last_result or "")
    assert stored.next_run_at == T0 + timedelta(hours=2)


async def test_the_loop_fires_a_job_when_woken_after_the_clock_reaches_it(harness, scheduler, clock):
    harness.model.push(Reply(text="from the loop"))
    created = await scheduler.create(job("every 1h"))
    await scheduler.start()
    clock.advance(timedelta(hours=1))
    scheduler.wake()
    event = await harness.next_event("session.created", timeout=15)
    assert event.data["schedule_id"] == created.id and event.data["origin"] == "cron"


async def test_a_stopped_run_is_recorded_as_stopped(harness, scheduler, clock):
    release = threading.Event()
    harness.model.push(held(release, "never seen"))
    created = await scheduler.create(job("every 1h"))
    try:
        [fired] = await scheduler.tick(T0 + timedelta(hours=1))
        await harness.model.await_requests(1)
        await harness.host.runner.stop(fired.session_id)
        await scheduler.drain()
    finally:
        release.set()
    assert (await harness.host.store.get_schedule(created.id)).last_status == "stopped"


async def test_two_schedulers_on_one_store_fire_a_due_job_once(harness, clock):
    harness.model.push(Reply(text="once"))
    first = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    second = Scheduler(harness.host.store, harness.host.runner, clock=clock)
    created = await first.create(job("every 1h"))
    due = clock.advance(timedelta(hours=1))
    # Both read the job as due before either claims it; only one claim can win.
    ticks = await asyncio.gather(first.tick(due), second.tick(due))
    fired = [*ticks[0], *ticks[1]]
    await first.drain()
    assert [f.schedule_id for f in fired] == [created.id]
    assert len(await harness.host.store.list_sessions()) == 1


def _agents_harness(tmp_path, **settings: object):
    return scripted_host(
        tmp_path,
        builtin_servers=False,
        scheduler_enabled=False,
        agents=[{"id": "ops"}, {"id": "reviewer"}],
        **settings,
    )


async def test_a_job_naming_an_agent_runs_as_that_agent_and_one_naming_none_follows_the_cron_route(tmp_path, clock):
    async with _agents_harness(tmp_path, routes=[{"channel": "cron", "agent": "ops"}]) as h:
        scheduler = Scheduler(h.host.store, h.host.runner, clock=clock, agents=h.host.agents)
        try:
            h.model.push(Reply(text="reviewed"), Reply(text="routed"))
            await scheduler.create(job("every 1h", "review", agent="reviewer"))
            await scheduler.create(job("every 1h", "tidy up"))
            fired = await scheduler.tick(clock.advance(timedelta(hours=1)))
            await scheduler.drain()
            sessions = {(await h.host.store.get_session(f.session_id)).title: f.session_id for f in fired}
            agents = {title: (await h.host.store.get_session(sid)).agent_id for title, sid in sessions.items()}
            assert agents == {"review": "reviewer", "tidy up": "ops"}
            reviewer = await h.host.store.get_session(sessions["review"])
            assert reviewer.workspace == str(h.host.agents.get("reviewer").workspace)
        finally:
            await scheduler.aclose()


async def test_a_job_an_agent_schedules_stays_that_agents_and_an_unknown_agent_is_refused(tmp_path, clock):
    async with _agents_harness(tmp_path) as h:
        scheduler = Scheduler(h.host.store, h.host.runner, clock=clock, agents=h.host.agents)
        try:
            creator = await h.host.runner.create(
                options=SessionOptions(title="the reviewer's session", agent="reviewer")
            )
            created = await scheduler.create(job("every 1h", "check again", created_by_session=creator.id))
            assert created.agent == "reviewer"
            with pytest.raises(UnknownAgent, match="no agent 'ghost'"):
                await scheduler.create(job("every 1h", "haunt", agent="ghost"))
            assert [s.id for s in await h.host.store.list_schedules()] == [created.id]
        finally:
            await scheduler.aclose()
