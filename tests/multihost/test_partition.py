"""Two `overseer serve` hosts: the one running a session loses its database lock (its watch
connection is terminated by the server, as in a partition), fences itself, and the session
completes on a host with the tool run exactly once; the fenced host then takes work again.
"""

from __future__ import annotations

import os
import select
from pathlib import Path

import psycopg
import pytest

from backend.cluster.host_watch import APPLICATION_NAME
from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.cluster import Cluster, start_cluster
from tests.multihost.test_approvals_across_hosts import count_once, is_status

pytestmark = pytest.mark.timeout(400)


def executor_of(cluster: Cluster, session_id: str) -> str:
    """The host whose workflow holds the session's run now."""
    with psycopg.connect(cluster.database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT executor_id FROM dbos.workflow_status WHERE workflow_uuid LIKE %s AND status = 'PENDING'",
            (f"{session_id}.%",),
        ).fetchone()
    assert row is not None, f"no pending run of {session_id}"
    return row[0]


def terminate_watch_connection(cluster: Cluster, host_id: str) -> None:
    with psycopg.connect(cluster.database_url, autocommit=True) as conn:
        rows = conn.execute(
            # This test's database only: tests running side by side name their hosts alike.
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",
            (f"{APPLICATION_NAME}:{host_id}",),
        ).fetchall()
    assert rows == [(True,)], rows


def test_a_host_that_loses_its_lock_mid_approval_fences_itself_and_the_tool_runs_once_elsewhere(tmp_path: Path):
    with start_cluster(tmp_path, count_once, hosts=2) as cluster:
        with cluster.hosts[0].events() as dashboard:
            session_id = cluster.hosts[0].api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            fenced = cluster.host(executor_of(cluster, session_id))
            other = next(h for h in cluster.hosts if h is not fenced)
            assert fenced.process is not None

            terminate_watch_connection(cluster, fenced.host_id)
            fenced.process.wait_for_line(lambda line: "fenced:" in line and "1 runs" in line, what="the fence")
            fenced.process.wait_for_line(lambda line: "takes work again" in line, what="the lock held again")

            # The run was handed back (by the survivor or by the fenced host itself) and asks again.
            approval_id = other.api.get("/api/approvals", params={"status": "pending"}).json()[0]["id"]
            answered = other.api.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})
            assert answered.status_code == 200, answered.text
            dashboard.next(is_status(session_id, "completed"), timeout=60)
        assert (cluster.workspace / "count.txt").read_text() == "ran\n"

        # The fenced host takes work again: alone now, it runs the next session.
        other.kill()
        with fenced.events() as dashboard:
            second = fenced.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            asked = dashboard.next(lambda e: e.get("session_id") == second and e["type"] == "approval.requested", timeout=60)
            assert executor_of(cluster, second) == fenced.host_id
            answered = fenced.api.post(f"/api/approvals/{asked['data']['id']}", json={"decision": "allow_once"})
            assert answered.status_code == 200, answered.text
            dashboard.next(is_status(second, "completed"), timeout=60)
        assert (cluster.workspace / "count.txt").read_text() == "ran\nran\n"


SLOW = "echo start >> count.txt && echo started > started.fifo && sleep 60 && echo end >> count.txt"


def slow_once(request: ModelRequest) -> Reply:
    """Stateless: a command that signals it started and then takes a minute; then report its result."""
    results = request.tool_results()
    if not results:
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": SLOW})])
    return Reply(text=f"finished: {results[0].text}")


def wait_for_fifo_line(path: Path, timeout: float = 60) -> str:
    """The first line written to a FIFO, waiting (bounded) for a writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"nothing written to {path} within {timeout} s"
        return os.read(fd, 100).decode()
    finally:
        os.close(fd)


def test_a_host_that_loses_its_lock_mid_tool_leaves_the_call_interrupted_and_it_never_runs_again(tmp_path: Path):
    with start_cluster(tmp_path, slow_once, hosts=2) as cluster:
        os.mkfifo(cluster.workspace / "started.fifo")
        with cluster.hosts[0].events() as dashboard:
            session_id = cluster.hosts[0].api.post("/api/sessions", json={"prompt": "slow"}).json()["id"]
            asked = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            answered = cluster.hosts[0].api.post(f"/api/approvals/{asked['data']['id']}", json={"decision": "allow_once"})
            assert answered.status_code == 200, answered.text
            assert wait_for_fifo_line(cluster.workspace / "started.fifo") == "started\n"
            fenced = cluster.host(executor_of(cluster, session_id))
            assert fenced.process is not None

            terminate_watch_connection(cluster, fenced.host_id)
            fenced.process.wait_for_line(lambda line: "fenced:" in line and "1 runs" in line, what="the fence")
            done = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "message"
                                  and e["data"]["role"] == "assistant" and "finished" in str(e["data"]["content"]), timeout=60)
            dashboard.next(is_status(session_id, "completed"), timeout=60)
        assert "was not run again" in str(done["data"]["content"])
        # Started once, cut off by the fence (its process group killed), and never started again.
        assert (cluster.workspace / "count.txt").read_text() == "start\n"
