"""A full disk and a read-only database, through the API (issue 31, item 10).

The data dir is a small filesystem the test makes and fills (backend/testing/filesystems.py). A
run that cannot save ends `error` with the reason once there is room, never `running` with
nobody running it; a request that cannot save answers 503 with the reason.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from backend.api.app import create_app
from backend.app.host import Host
from backend.domain.models import Event
from backend.engine.events import Subscription
from backend.testing import ScriptedModelServer
from backend.testing.filesystems import fill, small_filesystem
from backend.testing.harness import scripted_settings
from backend.testing.script import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")


@asynccontextmanager
async def serving(root: Path, model: ScriptedModelServer, pool) -> AsyncIterator[tuple[httpx.AsyncClient, Host]]:
    settings = scripted_settings(root, model)
    host = Host(settings, pool=pool)
    app = create_app(settings, host=host)
    await host.start()
    host.runner.storage_retry = 0.05
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {app.state.auth.token}"}
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client:
            yield client, host
    finally:
        await host.aclose()


async def next_event(events: Subscription, session_id: str, fits) -> Event:
    while True:
        event = await events.get(timeout=20)
        if event.session_id == session_id and fits(event):
            return event


async def test_a_run_on_a_disk_that_fills_ends_error_the_disk_is_full_once_space_returns_and_a_start_answers_503(
    tmp_path, pool
):
    release = threading.Event()
    # The answer is large, so saving it must grow the database's files: on a full disk it cannot.
    stalled = Reply(text="y" * 1_000_000, hang_after_chunks=2, release=release)
    with ScriptedModelServer([stalled, Reply(text="done")]) as model, small_filesystem(tmp_path / "data") as data:
        async with serving(tmp_path, model, pool) as (client, host):
            events = host.bus.subscribe(None)
            created = (await client.post("/api/sessions", json={"prompt": "write a lot"})).json()
            sid = created["id"]
            await next_event(events, sid, lambda e: e.type == "token")  # the answer is streaming
            filler = fill(data)
            release.set()
            told = await next_event(events, sid, lambda e: e.type == "error")
            assert told.ephemeral and "the disk is full" in told.data["message"]

            refused = await client.post("/api/sessions", json={"prompt": "another"})
            assert refused.status_code == 503
            assert refused.json() == {"detail": "the disk is full"}

            filler.unlink()  # the room is back: the run's end is written
            ended = await next_event(events, sid, lambda e: e.type == "session.status")
            assert ended.data["status"] == "error" and ended.data["error"] == "the disk is full"
            shown = (await client.get(f"/api/sessions/{sid}")).json()
            assert (shown["status"], shown["error"]) == ("error", "the disk is full")

            # Nothing is stuck: the session takes the next message and runs.
            assert (await client.post(f"/api/sessions/{sid}/messages", json={"content": "again"})).status_code == 202
            done = await host.runner.wait(sid, timeout=20)
            assert done.status == "completed"
            host.bus.unsubscribe(events)


async def test_a_start_on_a_read_only_database_answers_503_saying_so(tmp_path, pool):
    with ScriptedModelServer([Reply(text="never")]) as model:
        async with serving(tmp_path, model, pool) as (client, _):
            assert (await client.post("/api/sessions", json={})).status_code == 201
        database = tmp_path / "data" / "overseer.db"
        subprocess.run(["chattr", "+i", str(database)], check=True)
        try:
            async with serving(tmp_path, model, pool) as (client, _):
                assert len((await client.get("/api/sessions")).json()) == 1  # still read
                refused = await client.post("/api/sessions", json={"prompt": "hello"})
                assert refused.status_code == 503
                assert refused.json() == {"detail": "the database is read-only"}
        finally:
            subprocess.run(["chattr", "-i", str(database)], check=True)
