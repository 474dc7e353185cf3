"""The multi-host harness: real `overseer serve` processes on one Postgres database."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.testing import ModelRequest, Reply
from backend.testing.cluster import start_cluster

# Real hosts: each starts Python, its store, DBOS and a shell server, on two cores shared with
# other work; the suite's 120 s per test is for one behaviour in one process.
pytestmark = pytest.mark.timeout(400)


def answer(request: ModelRequest) -> Reply:
    return Reply(text=f"hello from the script: {request.last_prompt()}")


def test_two_hosts_on_one_database_list_the_same_session(tmp_path: Path):
    with start_cluster(tmp_path, answer, hosts=2) as cluster:
        a, b = cluster.hosts
        created = a.api.post("/api/sessions", json={"prompt": "hi"})
        assert created.status_code == 201, created.text
        session_id = created.json()["id"]

        assert session_id in [s["id"] for s in b.api.get("/api/sessions").json()]
        assert [h.api.get("/api/health").json()["host_id"] for h in (a, b)] == ["a", "b"]
        assert (b.data_dir / "host_id").read_text() == "b\n"


def test_a_killed_host_starts_again_on_its_port_and_data_dir(tmp_path: Path):
    with start_cluster(tmp_path, answer, hosts=1) as cluster:
        [a] = cluster.hosts
        port = a.port
        a.kill()
        assert not a.running
        a.start()
        assert (a.port, a.running) == (port, True)
        assert a.api.get("/api/health").json()["host_id"] == "a"
