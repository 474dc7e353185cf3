"""Three `overseer serve` hosts on one database: an approval asked on one is answered on another.

The run may execute on any host (placement is the queue's); what is checked is what a person
sees: the approval is listed everywhere, answered once, the tool runs once, and a dashboard on
another host saw the session's every stored event, in order, with no gap.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.cluster import start_cluster

# Real hosts: each starts Python, its store, DBOS and a shell server, on two cores shared with
# other work; the suite's 120 s per test is for one behaviour in one process.
pytestmark = pytest.mark.timeout(400)


def count_once(request: ModelRequest) -> Reply:
    """Stateless, so it serves every host: append a line to count.txt, then report."""
    results = request.tool_results()
    if not results:
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo ran >> count.txt"})])
    return Reply(text=f"finished: {results[0].text}")


def is_status(session_id: str, status: str):
    return lambda e: e.get("session_id") == session_id and e.get("type") == "session.status" and e["data"]["status"] == status


def test_an_approval_asked_on_one_host_is_answered_on_another_and_the_tool_runs_once(tmp_path: Path):
    with start_cluster(tmp_path, count_once, hosts=3) as cluster:
        a, b, c = cluster.hosts
        with b.events() as dashboard_b, c.events() as dashboard_c:
            session_id = a.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            asked = dashboard_b.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            approval_id = asked["data"]["id"]
            for host in (b, c):
                pending = host.api.get("/api/approvals", params={"status": "pending"}).json()
                assert [p["id"] for p in pending] == [approval_id], host.name

            answered = c.api.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})
            assert answered.status_code == 200, answered.text
            dashboard_b.next(is_status(session_id, "completed"))
            dashboard_c.next(is_status(session_id, "completed"))

            stored = a.api.get(f"/api/sessions/{session_id}/events").json()
        assert (cluster.workspace / "count.txt").read_text() == "ran\n"
        assert [(e["seq"], e["type"]) for e in stored] == [(i, e["type"]) for i, e in enumerate(stored, 1)]
        for dashboard in (dashboard_b, dashboard_c):
            seen = [(e["seq"], e["type"]) for e in dashboard.events_of(session_id)]
            assert seen == [(e["seq"], e["type"]) for e in stored]
        decided = b.api.get(f"/api/approvals/{approval_id}").json()
        assert decided["status"] == "allowed"


def test_concurrent_answers_from_two_hosts_one_wins(tmp_path: Path):
    with start_cluster(tmp_path, count_once, hosts=2) as cluster:
        a, b = cluster.hosts
        with a.events() as dashboard:
            session_id = b.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            asked = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            approval_id = asked["data"]["id"]

            answers: dict[str, int] = {}
            ready = threading.Barrier(2)

            def answer(host, decision: str) -> None:
                ready.wait(timeout=10)
                answers[decision] = host.api.post(f"/api/approvals/{approval_id}", json={"decision": decision}).status_code

            threads = [
                threading.Thread(target=answer, args=(a, "allow_once")),
                threading.Thread(target=answer, args=(b, "deny")),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
            dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "session.status"
                           and e["data"]["status"] in ("completed", "error", "stopped", "idle"))

        assert sorted(answers.values()) == [200, 409], answers
        winner = next(decision for decision, code in answers.items() if code == 200)
        decided = a.api.get(f"/api/approvals/{approval_id}").json()
        assert decided["status"] == ("allowed" if winner == "allow_once" else "denied")
        ran = (cluster.workspace / "count.txt").read_text() if (cluster.workspace / "count.txt").exists() else ""
        assert ran == ("ran\n" if winner == "allow_once" else "")


def test_a_session_stopped_on_another_host_stops_where_it_runs(tmp_path: Path):
    # Two sessions, each stopped on the host it was not started on: where placement keeps a run
    # on the host that created it, both stops cross hosts; elsewhere at least one does.
    with start_cluster(tmp_path, count_once, hosts=2) as cluster:
        a, b = cluster.hosts
        with a.events() as dashboard:
            started = {host.name: host.api.post("/api/sessions", json={"prompt": "count"}).json()["id"] for host in (a, b)}
            asked = {}
            while len(asked) < 2:
                event = dashboard.next(lambda e: e.get("type") == "approval.requested")
                asked[event["session_id"]] = event["data"]["id"]
            for starter, stopper in ((a, b), (b, a)):
                session_id = started[starter.name]
                stopped = stopper.api.post(f"/api/sessions/{session_id}/stop")
                assert stopped.status_code == 200, stopped.text
                # The run itself withdrew its approval: only the host executing it can.
                withdrawn = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.resolved")
                assert withdrawn["data"]["status"] == "cancelled"
                late = starter.api.post(f"/api/approvals/{asked[session_id]}", json={"decision": "allow_once"})
                assert late.status_code == 409, late.text
            # A stop that crosses hosts is carried out after the answer to its POST: the run ends
            # (its approval withdrawn, then its status written) on the host executing it.
            for session_id in started.values():
                if not any(_stopped(m, session_id) for m in dashboard.seen):
                    dashboard.next(lambda e: _stopped(e, session_id))
        for session_id in started.values():
            assert a.api.get(f"/api/sessions/{session_id}").json()["status"] == "stopped"
        assert not (cluster.workspace / "count.txt").exists()


def _stopped(event: dict[str, Any], session_id: str) -> bool:
    return (
        event.get("session_id") == session_id
        and event.get("type") == "session.status"
        and event["data"]["status"] == "stopped"
    )


def test_the_same_answer_sent_to_two_hosts_is_200_on_both_and_the_tool_runs_once(tmp_path: Path):
    # Issue 31, item 12: an answer whose response was lost is sent again, perhaps to another host.
    with start_cluster(tmp_path, count_once, hosts=2) as cluster:
        a, b = cluster.hosts
        with a.events() as dashboard:
            session_id = b.api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            asked = dashboard.next(lambda e: e.get("session_id") == session_id and e["type"] == "approval.requested")
            approval_id = asked["data"]["id"]
            answers: dict[str, Any] = {}
            ready = threading.Barrier(2)

            def answer(host) -> None:
                ready.wait(timeout=10)
                answers[host.name] = host.api.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})

            threads = [threading.Thread(target=answer, args=(host,)) for host in (a, b)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
            later = a.api.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})
            other = b.api.post(f"/api/approvals/{approval_id}", json={"decision": "deny"})
            dashboard.next(is_status(session_id, "completed"))
        assert [answers[h.name].status_code for h in (a, b)] == [200, 200], {k: r.text for k, r in answers.items()}
        assert answers[a.name].json() == answers[b.name].json() == later.json()
        assert other.status_code == 409 and "admin (token, via rest) answered allow_once" in other.json()["detail"]
        assert (cluster.workspace / "count.txt").read_text() == "ran\n"
