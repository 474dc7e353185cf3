"""Several real `overseer serve` processes on one Postgres database: the multi-host test harness.

What a cluster is made of, per test:

- one fresh Postgres database (`backend.testing.postgres.fresh_database`), dropped at the end;
- one scripted model server in this process, shared by every host (so a script must be a
  callable that answers from the request alone, or a list every host draws from in turn);
- one workspace root every host works in (the "shared volume" of a deployment);
- per host: a subprocess `python -m backend.cli serve` on its own port of 127.0.0.1, its own
  data dir (`<root>/hosts/<name>`), `OVERSEER_HOST_ID=<name>`, and the cluster's one token.

A host counts as started once its output says uvicorn is listening (a line waited on with a
bound, never a sleep) and `GET /api/health` answers. Use it like this:

    with start_cluster(tmp_path, script, hosts=3) as cluster:
        a, b, c = cluster.hosts
        session = a.api.post("/api/sessions", json={"prompt": "hi"}).json()
        with b.events() as feed:                      # a WebSocket subscribed to every session
            feed.next(lambda e: e["type"] == "approval.requested")
        a.kill()                                      # SIGKILL, as a crash would
        a.start()                                     # again: same port, data dir and host id

`env=` adds or overrides environment variables for every host (per host: `host.env`), e.g.
`only_servers_env("shell")` is the default so each host starts just the shell server.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

from backend.api.server_limits import KEEP_ALIVE_TIMEOUT
from backend.testing.harness import SCRIPTED_MODEL, only_servers_env
from backend.testing.model_server import ScriptedModelServer
from backend.testing.postgres import fresh_database
from backend.testing.process import OverseerProcess
from backend.testing.script import Script

CLUSTER_TOKEN = "cluster-test-token"
START_TIMEOUT = 90.0
"""A host's start on a loaded 2-core machine: imports, migrations, its MCP servers' spawn."""
EVENT_TIMEOUT = 30.0
CLIENT_KEEPALIVE_EXPIRY = KEEP_ALIVE_TIMEOUT * 0.4
"""Seconds a client keeps an idle connection to a host (2 s): well under the host's keep-alive
timeout (5 s), so a client never sends on a connection the host is closing (that race lost an
answer to `ReadError('')`: bench/keepalive_race.py, issue 31 item 12)."""
CLIENT_LIMITS = httpx.Limits(keepalive_expiry=CLIENT_KEEPALIVE_EXPIRY)


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now (the host binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EventFeed:
    """A host's WebSocket, subscribed; `next` waits (bounded) for the event a test looks for."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []
        """Every message received so far, in order (events and protocol messages alike)."""

    def next(self, matches: Callable[[dict[str, Any]], bool], *, timeout: float = EVENT_TIMEOUT) -> dict[str, Any]:
        """The next message that `matches`; TimeoutError past `timeout` seconds."""
        while True:
            message = json.loads(self.ws.recv(timeout=timeout))
            self.seen.append(message)
            if matches(message):
                return message

    def events_of(self, session_id: str) -> list[dict[str, Any]]:
        """The persisted events of one session seen so far (deltas left out), in arrival order."""
        return [m for m in self.seen if m.get("session_id") == session_id and "seq" in m and not m.get("ephemeral")]

    def close(self) -> None:
        self.ws.close()

    def __enter__(self) -> EventFeed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(kw_only=True)
class ClusterHost:
    """One `overseer serve` of the cluster: where it listens, its process, and clients for it."""

    name: str
    port: int
    data_dir: Path
    env: dict[str, str]
    process: OverseerProcess | None = None
    _clients: list[httpx.Client] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host_id(self) -> str:
        return self.env["OVERSEER_HOST_ID"]

    @property
    def api(self) -> httpx.Client:
        """An authenticated HTTP client for this host's API (one, made on first use)."""
        if not self._clients:
            self._clients.append(
                httpx.Client(
                    base_url=self.url, headers={"Authorization": f"Bearer {CLUSTER_TOKEN}"}, timeout=30,
                    limits=CLIENT_LIMITS,
                )
            )
        return self._clients[0]

    def async_api(self) -> httpx.AsyncClient:
        """A new authenticated async HTTP client; the caller closes it."""
        return httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {CLUSTER_TOKEN}"}, timeout=30, limits=CLIENT_LIMITS
        )

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws?token={CLUSTER_TOKEN}"

    def events(self, session_id: str | None = None, since: Any = None) -> EventFeed:
        """A WebSocket subscribed to one session or all (None), from `since`, once `subscribed` arrived."""
        feed = EventFeed(connect(self.ws_url, open_timeout=EVENT_TIMEOUT))
        request: dict[str, Any] = {"type": "subscribe", "session_id": session_id}
        if since is not None:
            request["since"] = since
        feed.ws.send(json.dumps(request))
        feed.next(lambda m: m.get("type") == "subscribed")
        return feed

    def start(self, *, timeout: float = START_TIMEOUT) -> None:
        """Start the process (again, after `kill`/`stop`) and wait until it serves its health route."""
        self.launch()
        self.wait_started(timeout=timeout)

    def launch(self) -> None:
        """Start the process without waiting for it (`wait_started` waits): hosts start in parallel."""
        if self.running:
            raise RuntimeError(f"host {self.name} is already running")
        self.process = OverseerProcess(["serve", "--port", str(self.port)], self.env)

    def wait_started(self, *, timeout: float = START_TIMEOUT) -> None:
        """Wait for the line saying uvicorn listens, then check the health route answers."""
        assert self.process is not None, "launch() first"
        self.process.wait_for_line(lambda line: "running on" in line.lower(), what=f"host {self.name} listening",
                                   timeout=timeout)
        health = self.api.get("/api/health")
        if health.status_code != 200:
            raise AssertionError(f"host {self.name} is listening but unhealthy: {health.status_code} {health.text}")

    def kill(self) -> None:
        """SIGKILL: the host dies as in a crash, with nothing shut down cleanly."""
        if self.process is not None:
            self.process.kill()

    def stop(self) -> None:
        """SIGTERM and wait: a graceful shutdown."""
        if self.process is not None and self.process.proc.poll() is None:
            self.process.stop()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.proc.poll() is None

    @property
    def output(self) -> str:
        """What the current process printed (stdout and stderr) so far: for failure messages."""
        return self.process.output if self.process is not None else ""

    def close_clients(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()


@dataclass(kw_only=True)
class Cluster:
    """The hosts, their shared database, workspace and model."""

    hosts: list[ClusterHost]
    database_url: str
    workspace: Path
    model: ScriptedModelServer
    root: Path

    def host(self, name: str) -> ClusterHost:
        return next(h for h in self.hosts if h.name == name)

    base_env: dict[str, str]
    """The environment every host shares; a host adds its data dir and host id."""

    def add_host(self, name: str, *, start: bool = True, **env: str) -> ClusterHost:
        """Another host on the same database and workspace (started unless `start=False`)."""
        data_dir = self.root / "hosts" / name
        host = ClusterHost(
            name=name,
            port=free_port(),
            data_dir=data_dir,
            env={**self.base_env, "OVERSEER_DATA_DIR": str(data_dir), "OVERSEER_HOST_ID": name, **env},
        )
        self.hosts.append(host)
        if start:
            host.start()
        return host


def cluster_env(*, database_url: str, workspace: Path, model: ScriptedModelServer) -> dict[str, str]:
    """The environment every host shares (a host adds its data dir and host id)."""
    return {
        **os.environ,
        "OVERSEER_DATABASE_URL": database_url,
        "OVERSEER_WORKSPACE": str(workspace),
        "OVERSEER_MODEL": SCRIPTED_MODEL,
        "OVERSEER_API_BASE": model.openai_base,
        "OVERSEER_API_KEY": "scripted",
        "OVERSEER_RETRY_BACKOFF": "0.01",
        "OVERSEER_TOKEN": CLUSTER_TOKEN,
        **only_servers_env("shell"),
    }


@contextmanager
def start_cluster(
    root: Path,
    script: Script | None = None,
    *,
    hosts: int | list[str] = 2,
    env: dict[str, str] | None = None,
    label: str = "cluster",
) -> Iterator[Cluster]:
    """Start `hosts` hosts (named a, b, c, ... or as listed) in parallel; stop all on exit.

    Every host still running at the end is stopped with SIGTERM (SIGKILL if it will not go), then
    the model server stops and the database is dropped.
    """
    names = hosts if isinstance(hosts, list) else [chr(ord("a") + i) for i in range(hosts)]
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    with fresh_database(label) as database_url, ScriptedModelServer(script) as model:
        base = {**cluster_env(database_url=database_url, workspace=workspace, model=model), **(env or {})}
        cluster = Cluster(hosts=[], database_url=database_url, workspace=workspace, model=model, root=root, base_env=base)
        try:
            for name in names:
                cluster.add_host(name, start=False).launch()
            for host in cluster.hosts:
                host.wait_started()
            yield cluster
        finally:
            for host in cluster.hosts:
                host.close_clients()
                try:
                    host.stop()
                except Exception:  # one that will not stop is killed, so the database can be dropped
                    host.kill()
