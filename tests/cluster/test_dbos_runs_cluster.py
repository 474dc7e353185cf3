"""Runs placed and recovered by DBOS across real `overseer serve` processes on one Postgres.

A host is killed with SIGKILL, as a crash would; what it left is carried on by another host by
the rules a restart keeps: an approval still pending is asked again (and answered there), a tool
that was running is reported interrupted and never run again. Counting files in the shared
workspace tell how many times each command ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from backend.approvals.gate import INTERRUPTED
from backend.testing import ModelRequest, Reply
from backend.testing.cluster import ClusterHost, EventFeed, start_cluster
from backend.testing.script import ScriptedToolCall

WAIT = 60.0
SLOW = "echo start >> slow.txt; sleep 120; echo end >> slow.txt"
QUICK = "echo ran >> approved.txt"


def agent(request: ModelRequest) -> Reply:
    """`slow` and `approve` sessions each call one shell command, then answer with what it said."""
    results = request.last_tool_results()
    if results:
        return Reply(text=f"done: {results[-1][:200]}")
    command = SLOW if "slow" in request.last_prompt() else QUICK
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command})])


def of(session_id: str, type_: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e.get("session_id") == session_id and e.get("type") == type_


def start_session(host: ClusterHost, prompt: str) -> str:
    created = host.api.post("/api/sessions", json={"prompt": prompt})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def answer(host: ClusterHost, approval_id: str) -> None:
    answered = host.api.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})
    assert answered.status_code == 200, answered.text


def wait_status(host: ClusterHost, session_id: str, status: str, *, timeout: float = WAIT) -> dict[str, Any]:
    """The session as `host` lists it once its status is `status` (bounded; it waits on the feed)."""
    with host.events(session_id) as feed:
        row = host.api.get(f"/api/sessions/{session_id}").json()
        deadline = time.monotonic() + timeout
        while row["status"] != status:
            feed.next(of(session_id, "session.status"), timeout=max(deadline - time.monotonic(), 0.1))
            row = host.api.get(f"/api/sessions/{session_id}").json()
    return row


def runs_by_host(database_url: str) -> dict[str, str]:
    """Workflow id prefix (session id): the host that ran its latest run."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT workflow_uuid, executor_id FROM dbos.workflow_status ORDER BY created_at"
        ).fetchall()
    return {workflow.split(".", 1)[0]: executor for workflow, executor in rows}


def seen_or_next(feed: EventFeed, matches: Callable[[dict[str, Any]], bool], **bound: float) -> dict[str, Any]:
    """The first message that `matches`, among those the feed received already or the next ones."""
    return next((m for m in feed.seen if matches(m)), None) or feed.next(matches, **bound)


def requested(feed: EventFeed, session_id: str) -> str:
    return seen_or_next(feed, of(session_id, "approval.requested"))["data"]["id"]


def test_a_killed_hosts_runs_go_on_on_a_survivor_and_nothing_runs_twice(tmp_path: Path) -> None:
    with start_cluster(tmp_path, agent, hosts=["a"], label="dbos_kill") as cluster:
        [a] = cluster.hosts
        with a.events() as feed:
            waiting = start_session(a, "approve this")
            first_ask = requested(feed, waiting)
            slow = start_session(a, "slow work")
            answer(a, requested(feed, slow))
            seen_or_next(feed, of(slow, "tool.started"))
        b = cluster.add_host("b")
        assert runs_by_host(cluster.database_url) == {waiting: "a", slow: "a"}

        with b.events() as feed:
            killed = time.monotonic()
            a.kill()
            seen_or_next(feed, of(slow, "session.recovered"))
            recovered = time.monotonic() - killed
            result = seen_or_next(feed, of(slow, "tool.result"))
            assert INTERRUPTED in str(result["data"])
            # The approval stays pending under its old id, waited for again, and answered on the survivor.
            seen_or_next(feed, of(waiting, "session.recovered"))
            pending = b.api.get("/api/approvals", params={"status": "pending"}).json()
            assert [p["id"] for p in pending] == [first_ask]
            answer(b, first_ask)
        assert wait_status(b, waiting, "completed")["status"] == "completed"
        assert wait_status(b, slow, "completed")["status"] == "completed"

        assert runs_by_host(cluster.database_url) == {waiting: "b", slow: "b"}
        assert (cluster.workspace / "approved.txt").read_text() == "ran\n"
        assert (cluster.workspace / "slow.txt").read_text().count("start") == 1
        assert recovered < 30, f"recovery took {recovered:.1f} s"


def test_with_one_run_per_host_two_sessions_run_on_different_hosts(tmp_path: Path) -> None:
    env = {"OVERSEER_MAX_RUNS_PER_HOST": "1"}
    with start_cluster(tmp_path, agent, hosts=2, env=env, label="dbos_place") as cluster:
        a, b = cluster.hosts
        with a.events() as feed:  # a sees b's events too (the hosts' event bridge)
            first = start_session(a, "approve one")
            second = start_session(a, "approve two")
            # Each run waits for its approval, keeping its host's only slot meanwhile.
            asks = [requested(feed, session_id) for session_id in (first, second)]
            placed = runs_by_host(cluster.database_url)
            assert {placed[first], placed[second]} == {"a", "b"}
            for ask in asks:
                answer(b, ask)
        for session_id in (first, second):
            assert wait_status(a, session_id, "completed")["status"] == "completed"
        assert (cluster.workspace / "approved.txt").read_text() == "ran\nran\n"
