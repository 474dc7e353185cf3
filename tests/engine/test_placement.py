"""The placement seam: with SQLite a run starts in this process at once, exactly as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from backend.domain.session_options import SessionOptions
from backend.engine.placement import LocalPlacement
from backend.testing.harness import scripted_host
from backend.testing.script import Reply


async def _a_run_that_ends_at_once() -> None:
    return None


class CountingHost:
    """A runner stand-in that records the runs it was asked for."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def run_here(self, session_id: str) -> asyncio.Task[None]:
        self.started.append(session_id)
        return asyncio.create_task(_a_run_that_ends_at_once())


async def test_local_placement_starts_each_run_in_this_process_at_once() -> None:
    host = CountingHost()
    placement = LocalPlacement(host=host)

    await placement.place("s1")
    await placement.place("s2")

    assert host.started == ["s1", "s2"]


async def test_local_placement_recovers_every_active_session_and_never_waits_elsewhere() -> None:
    placement = LocalPlacement(host=CountingHost())

    assert await placement.may_recover("s1") is True
    # Nothing runs elsewhere, so there is nothing to wait for, even with no bound at all.
    assert await asyncio.wait_for(placement.wait_elsewhere("s1", None), timeout=1) is None


async def test_a_sqlite_host_runs_its_sessions_in_its_own_process(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="hello")]) as h:
        assert isinstance(h.host.runner.placement, LocalPlacement)
        assert h.host.runs is None  # no DBOS without a shared Postgres
        session = await h.start("hi")
        # The run exists the moment the session is created: no queue between them.
        assert h.host.runner.is_running(session.id)
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed"


async def test_waiting_for_a_session_with_no_run_here_returns_its_row_at_once_on_sqlite(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="hello")]) as h:
        session = await h.host.runner.create(options=SessionOptions(title="idle"))  # no prompt: never runs
        row = await asyncio.wait_for(h.host.runner.wait(session.id, timeout=None), timeout=5)
        assert row.id == session.id and not h.host.runner.is_running(session.id)
