"""A run left pending by an older release is placed again in the new one once nobody can be
running it; a live host of the older release keeps its runs (a rolling upgrade).

Releases are told apart by DBOS's application_version, here set per host with OVERSEER_APP_VERSION.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from backend.cluster.dbos_runs import APP_VERSION_ENV
from backend.testing.cluster import Cluster, start_cluster
from tests.multihost.test_approvals_across_hosts import count_once, is_status

pytestmark = pytest.mark.timeout(400)

OLD = "0.0.1+old"


def runs_of(cluster: Cluster, session_id: str) -> list[tuple[str, str, str]]:
    """The session's workflows as (status, executor, application version), oldest first."""
    with psycopg.connect(cluster.database_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT status, executor_id, application_version FROM dbos.workflow_status"
            " WHERE workflow_uuid LIKE %s ORDER BY created_at",
            (f"{session_id}.%",),
        ).fetchall()


def answer_and_finish(host, session_id: str) -> None:
    with host.events(session_id) as feed:
        [pending] = host.api.get("/api/approvals", params={"status": "pending"}).json()
        answered = host.api.post(f"/api/approvals/{pending['id']}", json={"decision": "allow_once"})
        assert answered.status_code == 200, answered.text
        if host.api.get(f"/api/sessions/{session_id}").json()["status"] != "completed":
            feed.next(is_status(session_id, "completed"), timeout=60)


def test_a_live_old_release_keeps_its_run_and_once_it_dies_a_new_release_host_runs_it_once(tmp_path: Path):
    with start_cluster(tmp_path, count_once, hosts=["old"], env={APP_VERSION_ENV: OLD}) as cluster:
        old = cluster.host("old")
        with old.events() as dashboard:
            session_id = old.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
        # A new release starts beside the live old one: it looks for runs of other releases as it starts.
        new = cluster.add_host("new", **{APP_VERSION_ENV: ""})
        assert runs_of(cluster, session_id) == [("PENDING", "old", OLD)]

        with new.events(session_id) as feed:
            old.kill()
            recovered = feed.next(lambda e: e["type"] == "session.recovered", timeout=60)
        assert recovered["data"]["by_host"] == "new"
        answer_and_finish(new, session_id)
        assert (cluster.workspace / "count.txt").read_text() == "ran\n"
        # The old run cancelled (never replayed); the new one, this release's, ran on this host
        # (its outcome is written just after the session's, so it may not be SUCCESS yet).
        [(first, _, _), (_, executor, version)] = runs_of(cluster, session_id)
        assert (first, executor) == ("CANCELLED", "new")
        assert version != OLD


def test_a_host_upgraded_in_place_runs_what_its_old_release_left_pending(tmp_path: Path):
    with start_cluster(tmp_path, count_once, hosts=["a"], env={APP_VERSION_ENV: OLD}) as cluster:
        a = cluster.host("a")
        with a.events() as dashboard:
            session_id = a.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
        a.kill()
        a.env[APP_VERSION_ENV] = ""  # the same host id, the new release
        a.start()
        answer_and_finish(a, session_id)
        assert (cluster.workspace / "count.txt").read_text() == "ran\n"
        # The old run cancelled (never replayed); the new one, this release's, ran on this host
        # (its outcome is written just after the session's, so it may not be SUCCESS yet).
        [(first, _, _), (_, executor, version)] = runs_of(cluster, session_id)
        assert (first, executor) == ("CANCELLED", "a")
        assert version != OLD
