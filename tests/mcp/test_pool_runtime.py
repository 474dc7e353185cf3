"""Servers added, removed and restarted while the pool runs, against real stdio subprocesses.

No sleeps: every wait is on an event, a call or a process's exit, bounded by `anyio.fail_after`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
import pytest_asyncio

from backend.mcp import McpPool, McpPoolError, ToolNotFound
from backend.mcp.config import McpServerConfig

EchoConfig = Callable[..., McpServerConfig]
BOUND = 30  # seconds; a bound on waits, never a timing assertion
FEATURES_SERVER = Path(__file__).parent / "fixtures" / "client_features_server.py"


async def exited(pid: int) -> None:
    """Return once process `pid` has exited (its pidfd turns readable); the caller bounds the wait."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await anyio.wait_readable(fd)
    finally:
        os.close(fd)


class Heard:
    """What a pool watcher was told, with a way to wait for a server to reach a state."""

    def __init__(self, pool: McpPool) -> None:
        self.pool = pool
        self.names: list[str] = []
        self.states: list[tuple[str, str]] = []
        self._changed = anyio.Event()

    def __call__(self, name: str) -> None:
        self.names.append(name)
        state = {s.name: s.state for s in self.pool.statuses()}.get(name, "removed")
        self.states.append((name, state))
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, name: str, state: str) -> None:
        with anyio.fail_after(BOUND):
            while (name, state) not in self.states:
                await self._changed.wait()


@pytest_asyncio.fixture
async def pool(tmp_path: Path) -> AsyncIterator[McpPool]:
    """A started pool with no servers yet."""
    async with McpPool({}, log_dir=tmp_path / "logs") as started:
        yield started


def ws(tmp_path: Path) -> dict[str, object]:
    return {"workspace": tmp_path, "session_id": "s1"}


async def pid_of(pool: McpPool, server: str, tmp_path: Path) -> int:
    with anyio.fail_after(BOUND):
        result = await pool.call(f"mcp__{server}__pid", {}, workspace=tmp_path, session_id="s1")
    assert not result.is_error, result.text
    return int(result.text)


async def test_a_server_added_at_run_time_starts_and_offers_its_tools(pool, echo_config, tmp_path):
    heard = Heard(pool)
    pool.watch(heard)
    assert pool.tool("mcp__late__echo") is None

    await pool.add_server("late", echo_config())
    await heard.until("late", "ready")

    assert pool.tool("mcp__late__echo") is not None
    assert ("late", "starting") in heard.states
    result = await pool.call("mcp__late__echo", {"text": "hi"}, **ws(tmp_path))
    assert '"text": "hi"' in result.text


async def test_a_removed_server_stops_its_process_and_its_tools_leave_the_catalog(pool, echo_config, tmp_path):
    await pool.add_server("gone", echo_config())
    await pool.wait_ready(timeout=BOUND)
    pid = await pid_of(pool, "gone", tmp_path)
    heard = Heard(pool)
    pool.watch(heard)

    await pool.remove_server("gone")

    with anyio.fail_after(BOUND):
        await exited(pid)
    assert "gone" not in {s.name for s in pool.statuses()}
    assert pool.tool("mcp__gone__echo") is None
    assert ("gone", "removed") in heard.states
    with pytest.raises(ToolNotFound):
        await pool.call("mcp__gone__echo", {"text": "hi"}, **ws(tmp_path))


async def test_a_call_in_flight_on_a_removed_server_fails_saying_it_was_stopped(pool, echo_config, tmp_path):
    await pool.add_server("busy", echo_config())
    await pool.wait_ready(timeout=BOUND)
    results = []

    async def sleep() -> None:
        results.append(await pool.call("mcp__busy__sleep", {"seconds": 600}, **ws(tmp_path)))

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tg:
            tg.start_soon(sleep)
            await pool.call("mcp__busy__wait_for_sleep", {}, **ws(tmp_path))
            await pool.remove_server("busy")
    assert results[0].is_error
    assert "stopped" in results[0].text


async def test_a_restarted_server_runs_in_a_new_process_and_says_why(pool, echo_config, tmp_path):
    await pool.add_server("echo", echo_config())
    await pool.wait_ready(timeout=BOUND)
    before = await pid_of(pool, "echo", tmp_path)

    await pool.restart_server("echo", reason="restarted by ann")
    # A call made at once waits for the new process instead of failing.
    after = await pid_of(pool, "echo", tmp_path)

    with anyio.fail_after(BOUND):
        await exited(before)
    assert after != before
    status = next(s for s in pool.statuses() if s.name == "echo")
    assert (status.state, status.restarts, status.last_restart) == ("ready", 1, "restarted by ann")


async def test_a_server_restarted_with_a_new_config_runs_the_new_config(pool, echo_config, tmp_path):
    await pool.add_server("echo", echo_config(env={"FLAVOUR": "old"}))
    await pool.wait_ready(timeout=BOUND)

    await pool.restart_server("echo", echo_config(env={"FLAVOUR": "new"}))

    with anyio.fail_after(BOUND):
        flavour = await pool.call("mcp__echo__getenv", {"name": "FLAVOUR"}, **ws(tmp_path))
    assert flavour.text == "new"
    assert pool.config_of("echo") is not None and pool.config_of("echo").env == {"FLAVOUR": "new"}
    assert next(s for s in pool.statuses() if s.name == "echo").restarts == 0


async def test_a_watcher_hears_when_a_server_offers_new_tools(pool, tmp_path):
    await pool.add_server("feat", McpServerConfig(command=sys.executable, args=[str(FEATURES_SERVER)]))
    await pool.wait_ready(timeout=BOUND)
    heard = Heard(pool)
    pool.watch(heard)
    changed = anyio.Event()
    pool.watch(lambda name: changed.set() if pool.tool("mcp__feat__late") else None)

    await pool.call("mcp__feat__add_tool", {"name": "late"}, **ws(tmp_path))

    with anyio.fail_after(BOUND):
        await changed.wait()
    assert "feat" in heard.names


async def test_a_server_that_cannot_start_is_in_error_and_the_pool_runs_on(pool, echo_config, tmp_path):
    heard = Heard(pool)
    pool.watch(heard)
    await pool.add_server("broken", McpServerConfig(command="/nonexistent/overseer-test-server"))
    await heard.until("broken", "error")
    await pool.add_server("fine", echo_config())
    await heard.until("fine", "ready")
    status = next(s for s in pool.statuses() if s.name == "broken")
    assert status.error and "broken" in status.error


async def test_names_that_are_taken_bad_or_unknown_are_refused(pool, echo_config):
    await pool.add_server("echo", echo_config())
    with pytest.raises(McpPoolError, match="already"):
        await pool.add_server("echo", echo_config())
    with pytest.raises(McpPoolError, match="invalid MCP server name"):
        await pool.add_server("a__b", echo_config())
    with pytest.raises(McpPoolError, match="no server"):
        await pool.remove_server("nobody")
    with pytest.raises(McpPoolError, match="no server"):
        await pool.restart_server("nobody")


async def test_a_watcher_that_stopped_watching_hears_nothing_more(pool, echo_config):
    heard = Heard(pool)
    stop = pool.watch(heard)
    stop()
    await pool.add_server("echo", echo_config())
    await pool.wait_ready(timeout=BOUND)
    assert heard.names == []


async def test_closing_the_pool_stops_servers_added_at_run_time(tmp_path, echo_config):
    async with McpPool({}, log_dir=tmp_path / "logs") as pool:
        await pool.add_server("echo", echo_config())
        await pool.wait_ready(timeout=BOUND)
        pid = await pid_of(pool, "echo", tmp_path)
    with anyio.fail_after(BOUND):
        await exited(pid)
    with pytest.raises(McpPoolError, match="closed"):
        await pool.add_server("late", echo_config())


async def test_a_watcher_hears_a_crashed_server_go_back_to_starting_and_ready_again(pool, echo_config, tmp_path):
    await pool.add_server("echo", echo_config())
    await pool.wait_ready(timeout=BOUND)
    heard = Heard(pool)
    pool.watch(heard)

    with anyio.fail_after(BOUND):
        crashed = await pool.call("mcp__echo__crash", {}, **ws(tmp_path))
    assert crashed.is_error
    await heard.until("echo", "ready")

    assert heard.states.index(("echo", "starting")) < heard.states.index(("echo", "ready"))
    status = next(s for s in pool.statuses() if s.name == "echo")
    assert status.restarts == 1
