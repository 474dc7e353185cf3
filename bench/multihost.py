"""Several hosts on one Postgres (runs placed by DBOS) against one SQLite host, and recovery time.

Scripted sessions each make `--calls` shell calls (`echo <session>-<n> >> runs.txt` in the shared
workspace), every one asked for approval. The bench answers each approval on a host other than
the one running the session and times decision -> `tool.started` (the POST of the answer to the
event, seen on host a's feed, which carries every host's events). At the end: every session
completed, every command ran exactly once (runs.txt), and each session's events on the feed are
the store's events, gapless and without duplicates (seq 1..n). The SQLite side is one host with
the same load (its approvals answered on itself). Then recovery: sessions whose tool is running
are left on a host that is killed (SIGKILL); the time to their interrupted results on a survivor.

    .venv/bin/python bench/multihost.py --sessions 600 --calls 5 --hosts 3

Prints JSON. The full size needs the machine to itself. An answer lost to a dropped connection is
sent again (a bounded number of times); when one is lost even so, the bench says so on stderr and
exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx  # noqa: E402
import psycopg  # noqa: E402
from _common import percentiles  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from backend.testing import ModelRequest, Reply  # noqa: E402
from backend.testing.cluster import CLUSTER_TOKEN, ClusterHost, cluster_env, free_port, start_cluster  # noqa: E402
from backend.testing.model_server import ScriptedModelServer  # noqa: E402
from backend.testing.script import ScriptedToolCall  # noqa: E402

CALLS = 5
SLOW = "sleep 300"
ANSWER_ATTEMPTS = 5
ANSWER_BACKOFF = 0.25
"""An answer lost to a dropped connection is sent again, after 0.25, 0.5, 1 and 2 s: answers are
safe to retry (the same answer again gets 200 and the approval as decided, issue 31 item 12)."""


async def post_answer(client: httpx.AsyncClient, approval_id: str, *, timeout: float = 30) -> int:
    """POST allow_once, again on a dropped connection (never on an HTTP error); the retries it took.

    Raises the last transport error once every attempt failed, and HTTPStatusError for a refusal.
    """
    for attempt in range(ANSWER_ATTEMPTS):
        try:
            response = await client.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"}, timeout=timeout)
        except httpx.TransportError:
            if attempt == ANSWER_ATTEMPTS - 1:
                raise
            await asyncio.sleep(ANSWER_BACKOFF * 2**attempt)
            continue
        response.raise_for_status()
        return attempt
    raise AssertionError("unreachable")


def agent(request: ModelRequest) -> Reply:
    """`<tag>` prompts make CALLS numbered echo calls, then answer; `slow <tag>` sleeps in its one call."""
    prompt = request.last_prompt()
    done = len(request.tool_results())
    if prompt.startswith("slow"):
        if done:
            return Reply(text="recovered")
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": SLOW})])
    if done >= CALLS:
        return Reply(text="done")
    command = f"echo {prompt}-{done} >> runs.txt"
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command})])


class Load:
    """Drives sessions through hosts' APIs and reads every event on one host's WebSocket."""

    def __init__(self, hosts: list[ClusterHost], *, cross: bool) -> None:
        self.hosts = hosts
        self.cross = cross
        """Answer each approval on a host other than the one that runs the session."""
        self.clients = {h.name: h.async_api() for h in hosts}
        self.events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.answered_at: dict[str, float] = {}
        self.round_trips: list[float] = []
        self.completed: set[str] = set()
        self.run_host: dict[str, str] = {}
        self.database_url: str | None = None
        self.all_done = asyncio.Event()
        self.expected = 0
        self._answering: set[asyncio.Task[None]] = set()
        self._lookup: psycopg.AsyncConnection[Any] | None = None
        self.failed_answers: list[str] = []
        self.answer_retries = 0
        self.not_allowed: list[str] = []
        """Approvals closed otherwise than by the bench's allow (an expiry: an answer that never woke its run)."""
        self._lookup_lock = asyncio.Lock()

    async def host_of(self, session_id: str) -> str:
        if not self.cross or self.database_url is None:
            return self.hosts[0].name
        if session_id not in self.run_host:
            # One connection for every look-up, taken in turn: a connection per answer would
            # add hundreds of clients to the hosts' own and exhaust the server's max_connections.
            async with self._lookup_lock:
                if self._lookup is None:
                    self._lookup = await psycopg.AsyncConnection.connect(self.database_url, autocommit=True)
                cursor = await self._lookup.execute(
                    "SELECT executor_id FROM dbos.workflow_status WHERE workflow_uuid LIKE %s AND status = 'PENDING'",
                    (f"{session_id}.%",),
                )
                row = await cursor.fetchone()
            self.run_host[session_id] = row[0] if row else self.hosts[0].name
        return self.run_host[session_id]

    async def answer(self, event: dict[str, Any]) -> None:
        session_id = event["session_id"]
        running_on = await self.host_of(session_id)
        others = [h.name for h in self.hosts if h.name != running_on] or [running_on]
        answerer = others[hash(event["data"]["id"]) % len(others)]
        self.answered_at[event["data"]["tool_call_id"]] = time.perf_counter()
        try:
            # Hundreds of answers at once wait for one of the client's 100 connections: the
            # default 30 s (PoolTimeout) once left an approval unanswered until it expired.
            self.answer_retries += await post_answer(self.clients[answerer], event["data"]["id"], timeout=600)
        except Exception as exc:  # a task's exception would go unseen: say which answer failed
            self.failed_answers.append(f"{event['data']['id']} on {answerer}: {exc!r}")

    async def read(self, ws: Any) -> None:
        async for raw in ws:
            message = json.loads(raw)
            session_id = message.get("session_id")
            if "seq" in message and not message.get("ephemeral"):
                self.events[session_id].append(message)
            kind = message.get("type")
            if kind == "approval.requested":
                task = asyncio.create_task(self.answer(message))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
            elif kind == "tool.started":
                asked = self.answered_at.pop(message["data"]["id"], None)
                if asked is not None:
                    self.round_trips.append((time.perf_counter() - asked) * 1000)
            elif kind == "approval.resolved" and message["data"]["status"] != "allowed":
                self.not_allowed.append(f"{session_id}: {message['data']['status']} by {message['data']['decided_by']}")
            elif kind == "session.status" and message["data"]["status"] == "completed":
                self.completed.add(session_id)
                if len(self.completed) >= self.expected:
                    self.all_done.set()

    async def run(self, prompts: list[str], timeout: float) -> float:
        self.expected = len(prompts)
        async with connect(self.hosts[0].ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "subscribe", "session_id": None}))
            while json.loads(await ws.recv()).get("type") != "subscribed":
                pass
            reader = asyncio.create_task(self.read(ws))
            started = time.perf_counter()
            creating = [
                self.clients[self.hosts[i % len(self.hosts)].name].post("/api/sessions", json={"prompt": p})
                for i, p in enumerate(prompts)
            ]
            for response in await asyncio.gather(*creating):
                response.raise_for_status()
            try:
                await asyncio.wait_for(self.all_done.wait(), timeout)
            finally:
                elapsed = time.perf_counter() - started
                reader.cancel()
        for client in self.clients.values():
            await client.aclose()
        if self._lookup is not None:
            await self._lookup.close()
        return elapsed

    def check(self, workspace: Path, prompts: list[str], calls: int, stored: dict[str, int]) -> dict[str, Any]:
        lines = Counter((workspace / "runs.txt").read_text().split()) if (workspace / "runs.txt").exists() else Counter()
        expected = {f"{p}-{n}" for p in prompts for n in range(calls)}
        gapped = duplicated = lost = 0
        for session_id, events in self.events.items():
            seqs = [e["seq"] for e in events]
            duplicated += len(seqs) - len(set(seqs))
            if sorted(set(seqs)) != list(range(1, len(set(seqs)) + 1)):
                gapped += 1
            if session_id in stored:
                lost += max(stored[session_id] - len(set(seqs)), 0)
        return {
            "sessions_completed": len(self.completed),
            "commands_missing": len(expected - set(lines)),
            "commands_run_twice": sum(1 for k in expected if lines[k] > 1),
            "sessions_with_seq_gaps": gapped,
            "duplicated_events": duplicated,
            "lost_events": lost,
            "failed_answer_count": len(self.failed_answers),
            "failed_answers": self.failed_answers[:10],
            "answer_retries": self.answer_retries,
            "approvals_not_allowed": self.not_allowed[:10],
        }


def stored_event_counts(database_url: str | None, db_path: Path | None) -> dict[str, int]:
    if database_url is not None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return dict(conn.execute("SELECT session_id, count(*) FROM events GROUP BY session_id").fetchall())
    import sqlite3

    assert db_path is not None
    with sqlite3.connect(db_path) as conn:
        return dict(conn.execute("SELECT session_id, count(*) FROM events GROUP BY session_id").fetchall())


def measure(load: Load, prompts: list[str], calls: int, timeout: float, workspace: Path, **where: Any) -> dict[str, Any]:
    elapsed = asyncio.run(load.run(prompts, timeout))
    result = load.check(workspace, prompts, calls, stored_event_counts(**where))
    return {
        **result,
        "seconds": round(elapsed, 2),
        "sessions_per_s": round(len(load.completed) / elapsed, 2),
        "tool_calls_per_s": round(len(load.completed) * calls / elapsed, 2),
        "approval_to_tool_start": percentiles(load.round_trips) if len(load.round_trips) > 1 else None,
    }


def multihost(root: Path, sessions: int, calls: int, hosts: int, timeout: float) -> dict[str, Any]:
    prompts = [f"m{i}" for i in range(sessions)]
    # Room for a fair share plus a tenth: a host that polls first cannot take nearly every run
    # (with room for all, one host did, and its runs' approvals waited behind its loop).
    per_host = max(-(-sessions * 11 // (10 * hosts)), 10)
    env = {"OVERSEER_MAX_RUNS_PER_HOST": str(per_host)}
    with start_cluster(root, agent, hosts=hosts, env=env, label="bench_multihost") as cluster:
        load = Load(cluster.hosts, cross=True)
        load.database_url = cluster.database_url
        numbers = measure(load, prompts, calls, timeout, cluster.workspace, database_url=cluster.database_url, db_path=None)
        numbers["max_runs_per_host"] = per_host
        with psycopg.connect(cluster.database_url, autocommit=True) as conn:
            numbers["runs_per_host"] = dict(
                conn.execute("SELECT executor_id, count(*) FROM dbos.workflow_status GROUP BY executor_id").fetchall()
            )
        numbers["recovery"] = recovery(cluster.hosts, cluster.database_url)
    return numbers


def recovery(hosts: list[ClusterHost], database_url: str, count: int = 3) -> dict[str, Any]:
    """Sessions mid-tool on the last host, which is killed: kill -> interrupted result on a survivor."""
    victim = hosts[-1]
    others = hosts[:-1]

    async def go() -> dict[str, Any]:
        async with connect(others[0].ws_url, max_size=None) as ws, victim.async_api() as api:
            await ws.send(json.dumps({"type": "subscribe", "session_id": None}))
            while json.loads(await ws.recv()).get("type") != "subscribed":
                pass
            ids: list[str] = []
            placed_on_victim: set[str] = set()
            # DBOS places a run on any host with room: start sessions until some run on the victim.
            for round_ in range(10):
                started: set[str] = set()
                batch = []
                for i in range(count):
                    response = await api.post("/api/sessions", json={"prompt": f"slow r{round_}-{i}"})
                    batch.append(response.json()["id"])
                ids.extend(batch)
                while len(started) < len(batch):
                    message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    if message.get("session_id") not in batch:
                        continue
                    if message.get("type") == "approval.requested":
                        await post_answer(api, message["data"]["id"])
                    elif message.get("type") == "tool.started":
                        started.add(message["session_id"])
                with psycopg.connect(database_url, autocommit=True) as conn:
                    for session_id in batch:
                        row = conn.execute(
                            "SELECT executor_id FROM dbos.workflow_status WHERE workflow_uuid LIKE %s AND status = 'PENDING'",
                            (f"{session_id}.%",),
                        ).fetchone()
                        if row and row[0] == victim.host_id:
                            placed_on_victim.add(session_id)
                if placed_on_victim:
                    break
            else:
                print(f"no run was placed on host {victim.name}: recovery not measured", file=sys.stderr)
            killed = time.perf_counter()
            victim.kill()
            recovered: dict[str, float] = {}
            resumed: dict[str, float] = {}
            while len(resumed) < len(placed_on_victim):
                message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                session_id = message.get("session_id")
                if session_id not in placed_on_victim:
                    continue
                if message.get("type") == "session.recovered":
                    recovered.setdefault(session_id, (time.perf_counter() - killed) * 1000)
                elif message.get("type") == "tool.result":
                    resumed.setdefault(session_id, (time.perf_counter() - killed) * 1000)
            return {
                "sessions_on_killed_host": len(placed_on_victim),
                "kill_to_handed_back_ms": sorted(round(v) for v in recovered.values()),
                "kill_to_interrupted_result_ms": sorted(round(v) for v in resumed.values()),
            }

    return asyncio.run(go())


def sqlite_host(root: Path, sessions: int, calls: int, timeout: float) -> dict[str, Any]:
    prompts = [f"s{i}" for i in range(sessions)]
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    with ScriptedModelServer(agent) as model:
        env = cluster_env(database_url="unused", workspace=workspace, model=model)
        del env["OVERSEER_DATABASE_URL"]
        data_dir = root / "data"
        host = ClusterHost(
            name="sqlite", port=free_port(), data_dir=data_dir,
            env={**env, "OVERSEER_DATA_DIR": str(data_dir), "OVERSEER_HOST_ID": "sqlite"},
        )
        host.start()
        try:
            load = Load([host], cross=False)
            return measure(load, prompts, calls, timeout, workspace, database_url=None, db_path=data_dir / "overseer.db")
        finally:
            host.close_clients()
            host.stop()


def main() -> None:
    global CALLS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    CALLS = args.calls
    with tempfile.TemporaryDirectory() as multi, tempfile.TemporaryDirectory() as single:
        result = {
            "sessions": args.sessions,
            "calls_per_session": args.calls,
            "postgres_hosts": args.hosts,
            "multihost": multihost(Path(multi), args.sessions, args.calls, args.hosts, args.timeout),
            "sqlite_one_host": sqlite_host(Path(single), args.sessions, args.calls, args.timeout),
        }
    print(json.dumps(result, indent=2))
    failed = {side: result[side]["failed_answer_count"] for side in ("multihost", "sqlite_one_host")}
    if any(failed.values()):
        print(f"bench/multihost.py: FAILED: answers lost after {ANSWER_ATTEMPTS} attempts: {failed} "
              f"(see failed_answers above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
