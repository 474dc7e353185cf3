"""Two `overseer serve` hosts on one database: a person's edits of a running session, made on
either host, survive the status writes of the host that runs it (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.cluster import start_cluster

# Real hosts: each starts Python, its store, DBOS and a shell server, on two cores shared with
# other work; the suite's 120 s per test is for one behaviour in one process.
pytestmark = pytest.mark.timeout(400)


def run_once(request: ModelRequest) -> Reply:
    """Stateless, so it serves every host: one shell call (it waits for a person), then an answer."""
    if not request.tool_results():
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo ran"})])
    return Reply(text="finished")


def test_edits_made_on_both_hosts_while_a_session_runs_survive_its_end(tmp_path: Path):
    with start_cluster(tmp_path, run_once, hosts=2) as cluster:
        a, b = cluster.hosts
        with a.events() as dashboard:
            session_id = a.api.post("/api/sessions", json={"prompt": "run it", "title": "before"}).json()["id"]
            asked = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            # One edit on each host: whichever host runs the session, the other one's edit is a
            # write it did not make, which it must not write back over.
            renamed = a.api.patch(f"/api/sessions/{session_id}", json={"title": "after"})
            assert renamed.status_code == 200, renamed.text
            switched = b.api.patch(f"/api/sessions/{session_id}", json={"auto_approve": True})
            assert switched.status_code == 200, switched.text

            answered = b.api.post(f"/api/approvals/{asked['data']['id']}", json={"decision": "allow_once"})
            assert answered.status_code == 200, answered.text
            dashboard.next(
                lambda e: e.get("session_id") == session_id
                and e["type"] == "session.status"
                and e["data"]["status"] == "completed"
            )
        for host in (a, b):
            row = host.api.get(f"/api/sessions/{session_id}").json()
            assert (row["status"], row["title"]) == ("completed", "after"), host.name
            assert row["auto_approve"] is not None, host.name
