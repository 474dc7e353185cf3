"""A cron job on three hosts of one database fires once per due time, not once per host."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from backend.domain.models import utcnow
from backend.store.postgres import PostgresStore
from backend.testing import ModelRequest, Reply
from backend.testing.cluster import ClusterHost, start_cluster

# Real hosts: each starts Python, its store, DBOS and a shell server, on two cores shared with
# other work; the suite's 120 s per test is for one behaviour in one process.
pytestmark = pytest.mark.timeout(400)


def done(request: ModelRequest) -> Reply:
    return Reply(text="cron ran")


async def make_due(database_url: str, schedule_id: str) -> None:
    """Move the job's next run into the past, as if its time came while every host was down."""
    async with PostgresStore(database_url, max_connections=1) as store:
        job = await store.get_schedule(schedule_id)
        await store.save_schedule(job.model_copy(update={"next_run_at": utcnow() - timedelta(minutes=1)}))


def cron_session(host: ClusterHost) -> str:
    """The id of the first session a cron job started, waiting (bounded) for one to appear."""
    with host.events() as feed:
        started = [s["id"] for s in host.api.get("/api/sessions").json() if s["origin"] == "cron"]
        if started:
            return started[0]
        created = feed.next(lambda e: e.get("type") == "session.created" and e["data"].get("origin") == "cron")
        return created["session_id"]


def test_a_due_cron_job_fires_once_across_three_hosts(tmp_path: Path):
    with start_cluster(tmp_path, done, hosts=3) as cluster:
        a, b, c = cluster.hosts
        job = a.api.post("/api/schedules", json={"schedule": "every 1h", "prompt": "tidy up", "name": "tidy"})
        assert job.status_code in (200, 201), job.text
        schedule_id = job.json()["id"]
        for host in cluster.hosts:
            host.stop()
        asyncio.run(make_due(cluster.database_url, schedule_id))

        for host in cluster.hosts:  # all at once: each host's scheduler looks at start-up
            host.launch()
        for host in cluster.hosts:
            host.wait_started()
        session_id = cron_session(b)
        with c.events(session_id, since=0) as feed:
            feed.next(lambda e: e.get("type") == "session.status" and e["data"]["status"] == "completed")

        cron_sessions = [s for s in c.api.get("/api/sessions").json() if s["origin"] == "cron"]
        assert [s["id"] for s in cron_sessions] == [session_id]
        fired = a.api.get(f"/api/schedules/{schedule_id}").json()
        assert fired["run_count"] == 1
        assert fired["last_session_id"] == session_id
