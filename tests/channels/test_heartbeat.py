"""Heartbeat runs on an injected clock: on time, never two at once, nothing without tasks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.channels import attach
from backend.channels.heartbeat import Heartbeat
from backend.config import HeartbeatConfig
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import ModelRequest, Reply
from backend.testing.harness import Harness, scripted_host
from tests.channels.support import BOUND, write_notes

pytestmark = pytest.mark.asyncio(loop_scope="module")
START = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
HALF_HOUR = timedelta(minutes=30)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def beat(h: Harness, clock: Clock, mode: str = "agent") -> Heartbeat:
    return Heartbeat(h.host.app_services, HeartbeatConfig(enabled=True, interval=1800, mode=mode), clock=clock)


def done_reading_tasks(request: ModelRequest) -> Reply:
    return Reply(text=f"did: {request.last_prompt().splitlines()[-1]}")


async def test_a_beat_runs_on_time_with_heartbeat_md_as_its_task_list(tmp_path: Path, pool: McpPool):
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool) as h:
        (h.workspace / "HEARTBEAT.md").write_text("# Tasks\n- water the plants\n")
        clock = Clock()
        heartbeat = beat(h, clock, mode="ask")
        early = await heartbeat.tick()
        clock.now = START + HALF_HOUR - timedelta(seconds=1)
        almost = await heartbeat.tick()
        clock.now = START + HALF_HOUR
        on_time = await heartbeat.tick()
        [session] = await h.host.store.list_sessions()
        done = await h.host.runner.wait(session.id, timeout=BOUND)
        answer = await h.host.sessions.last_answer(session.id)
        again = await heartbeat.tick()  # the next beat is half an hour later
    assert (early, almost, on_time, again) == ("not_due", "not_due", "started", "not_due")
    assert (session.origin, session.mode, done.status) == ("heartbeat", "ask", "completed")
    assert answer == "did: - water the plants"
    assert "heartbeat run" in h.model.requests[0].last_prompt()


async def test_a_beat_never_starts_while_the_last_heartbeat_still_waits(tmp_path: Path, pool: McpPool):
    async with scripted_host(tmp_path, write_notes, pool=pool) as h:
        (h.workspace / "HEARTBEAT.md").write_text("- write a note\n")
        clock = Clock()
        heartbeat = beat(h, clock)
        clock.now += HALF_HOUR
        first = await heartbeat.tick()
        approval = await h.next_approval(timeout=BOUND)  # the first run waits for a person
        clock.now += HALF_HOUR
        overlapping = await heartbeat.tick()
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(approval.session_id, timeout=BOUND)
        clock.now += HALF_HOUR
        after = await heartbeat.tick()
        sessions = await h.host.store.list_sessions()
        for session in sessions:  # the second run asks too; let it end
            if session.id != approval.session_id:
                await h.answer(await h.next_approval(timeout=BOUND), Decision(kind="deny"))
                await h.host.runner.wait(session.id, timeout=BOUND)
    assert (first, overlapping, after) == ("started", "still_running", "started")
    assert len(sessions) == 2 and {s.origin for s in sessions} == {"heartbeat"}


@pytest.mark.parametrize("content", [None, "", "  \n\n"])
async def test_no_session_is_made_without_tasks(tmp_path: Path, pool: McpPool, content: str | None):
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool) as h:
        if content is not None:
            (h.workspace / "HEARTBEAT.md").write_text(content)
        clock = Clock()
        heartbeat = beat(h, clock)
        clock.now += HALF_HOUR
        outcome = await heartbeat.tick()
        sessions = await h.host.store.list_sessions()
    assert outcome == "nothing_to_do" and sessions == [] and h.model.requests == []


async def test_the_data_dirs_heartbeat_md_serves_when_the_workspace_has_none(tmp_path: Path, pool: McpPool):
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool, heartbeat={"enabled": True}) as h:
        (h.host.data_dir / "HEARTBEAT.md").write_text("- check the backups\n")
        attach(h.host.app_services)
        [heartbeat] = [s for s in h.host.attached if isinstance(s, Heartbeat)]
        heartbeat.next_due = heartbeat.clock()  # due now
        outcome = await heartbeat.tick()
        [session] = await h.host.store.list_sessions()
        await h.host.runner.wait(session.id, timeout=BOUND)
        answer = await h.host.sessions.last_answer(session.id)
    assert outcome == "started" and answer == "did: - check the backups"


async def test_a_beat_wakes_the_configured_agent_with_its_own_workspaces_task_list(tmp_path: Path, pool: McpPool):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "HEARTBEAT.md").write_text("- rotate the logs\n")
    agents = [{"id": "ops", "workspace": str(tmp_path / "ops")}]
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool, agents=agents) as h:
        (h.workspace / "HEARTBEAT.md").write_text("- main's own task\n")
        clock = Clock()
        config = HeartbeatConfig(enabled=True, interval=1800, agent="ops")
        heartbeat = Heartbeat(h.host.app_services, config, clock=clock)
        clock.now = START + HALF_HOUR
        assert await heartbeat.tick() == "started"
        [session] = await h.host.store.list_sessions()
        await h.host.runner.wait(session.id, timeout=BOUND)
        answer = await h.host.sessions.last_answer(session.id)
    assert (session.agent_id, session.workspace) == ("ops", str((tmp_path / "ops").resolve()))
    assert answer == "did: - rotate the logs"


async def test_a_beat_naming_no_agent_follows_the_heartbeat_route(tmp_path: Path, pool: McpPool):
    (tmp_path / "ops").mkdir()
    agents = [{"id": "ops", "workspace": str(tmp_path / "ops")}]
    routes = [{"channel": "heartbeat", "agent": "ops"}]
    async with scripted_host(tmp_path, [], pool=pool, agents=agents, routes=routes) as h:
        (h.workspace / "HEARTBEAT.md").write_text("- main's task, not ops'\n")
        clock = Clock()
        heartbeat = beat(h, clock)
        clock.now = START + HALF_HOUR
        # The ops agent's workspace has no task list: nothing runs, main's list is not borrowed.
        assert heartbeat.agent_id == "ops"
        assert await heartbeat.tick() == "nothing_to_do"
        assert await h.host.store.list_sessions() == []



async def test_three_heartbeats_on_one_database_start_one_beat_per_round(tmp_path: Path, pool: McpPool):
    # Three hosts' heartbeats, each ticking on its own: the round is claimed in the store, whose
    # claim is one row per key on SQLite and Postgres alike (tests/store: across stores too).
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool) as h:
        (h.workspace / "HEARTBEAT.md").write_text("# Tasks\n- water the plants\n")
        clock = Clock()
        beats = [beat(h, clock) for _ in range(3)]
        clock.now = START + HALF_HOUR + timedelta(seconds=5)  # a host that looks late beats the same round
        outcomes = [await b.tick() for b in beats]
        [session] = await h.host.store.list_sessions()
        await h.host.runner.wait(session.id, timeout=BOUND)
        after = [await b.tick() for b in beats]  # the round is over, even with its session done
    assert outcomes == ["started", "still_running", "still_running"]
    assert after == ["not_due"] * 3
    assert session.origin == "heartbeat"


async def test_a_round_another_host_claimed_is_not_beaten_again(tmp_path: Path, pool: McpPool):
    async with scripted_host(tmp_path, done_reading_tasks, pool=pool) as h:
        (h.workspace / "HEARTBEAT.md").write_text("# Tasks\n- water the plants\n")
        clock = Clock()
        heartbeat = beat(h, clock)
        assert await h.host.store.claim_once(f"heartbeat:{(START + HALF_HOUR).isoformat()}")  # another host's claim
        clock.now = START + HALF_HOUR
        outcome = await heartbeat.tick()
        sessions = await h.host.store.list_sessions()
    assert (outcome, sessions) == ("beaten_elsewhere", [])
