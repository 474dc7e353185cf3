"""Remote MCP servers in the pool (backend/mcp/remote.py, backend/mcp/server.py), against real ones.

tests/mcp/fixtures/remote_server.py serves an SDK server with uvicorn on loopback, in this event
loop, so a test can stop it, restart it on the same URL and expire its MCP sessions. "legacy" is
a handshake-era server (initialize, Mcp-Session-Id), as most remote servers are today; "modern"
speaks 2026-07-28. No sleeps: every wait is on an event, bounded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.server import ServerState

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from remote_server import RemoteServer  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion


@pytest.fixture(params=["legacy", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def legacy_server() -> AsyncIterator[RemoteServer]:
    async with RemoteServer(legacy=True) as server:
        yield server


def remote(server: RemoteServer, **overrides: Any) -> McpServerConfig:
    fields: dict[str, Any] = {"type": server.transport, "url": server.url, "start_timeout": BOUND}
    return McpServerConfig(**(fields | overrides))


async def ready_pool(tmp_path: Path, server: RemoteServer, **kwargs: Any) -> McpPool:
    pool = McpPool({"docs": kwargs.pop("config", None) or remote(server)}, log_dir=tmp_path / "logs", **kwargs)
    await pool.start()
    await pool.wait_ready(timeout=BOUND)
    return pool


async def call(pool: McpPool, tool: str, arguments: dict[str, Any] | None = None, *, session: str = "s1", **kw: Any):
    with anyio.fail_after(BOUND):
        return await pool.call(f"mcp__docs__{tool}", arguments or {}, workspace=Path("/tmp"), session_id=session, **kw)


async def state_becomes(pool: McpPool, state: ServerState, *, restarts: int | None = None) -> None:
    """Wait (bounded) until the server is in `state` (after `restarts` reconnections, if given)."""
    runner = pool._runners["docs"]  # the runner's change event is what the pool's own waits use
    with anyio.fail_after(BOUND):
        while runner.current_state()[0] != state or restarts not in (None, runner.restarts):
            assert runner._changed is not None
            await runner._changed.wait()


async def test_every_session_calls_a_remote_server_over_one_shared_connection(tmp_path: Path, legacy_server):
    pool = await ready_pool(tmp_path, legacy_server)
    try:
        first = await call(pool, "echo", {"text": "one"}, session="s1")
        second = await call(pool, "echo", {"text": "two"}, session="s2")
        [status] = pool.statuses()
    finally:
        await pool.aclose()
    assert (first.text, second.text) == ("echo: one", "echo: two")
    assert len(legacy_server._manager._server_instances) <= 1  # noqa: SLF001 (closed: 0, open: 1)
    assert (status.state, status.pid, status.url) == ("ready", None, legacy_server.url)
    assert [t.name for t in status.tools][:2] == ["mcp__docs__echo", "mcp__docs__meta"]


async def test_the_hosts_per_call_context_is_not_sent_to_a_remote_server(tmp_path: Path, era: str):
    async with RemoteServer(legacy=era == "legacy") as server:
        pool = await ready_pool(tmp_path, server)
        try:
            result = await call(pool, "meta")
        finally:
            await pool.aclose()
    assert not result.is_error, result.text
    assert not [key for key in json.loads(result.text) if key.startswith("overseer/")]
    assert not [key for meta in server.seen.metas for key in meta if key.startswith("overseer/")]


async def test_a_server_behind_a_bearer_token_gets_it_from_the_environment(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DOCS_TOKEN", "s3cret")
    async with RemoteServer(token="s3cret", legacy=True) as server:
        config = remote(server, headers={"Authorization": "Bearer ${DOCS_TOKEN}"})
        pool = await ready_pool(tmp_path, server, config=config)
        try:
            result = await call(pool, "echo", {"text": "in"})
        finally:
            await pool.aclose()
    assert (result.is_error, result.text) == (False, "echo: in")
    assert "${DOCS_TOKEN}" in config.headers["Authorization"]  # the secret is read, not kept


async def test_a_wrong_token_leaves_the_server_failing_with_the_http_error_and_no_tools(tmp_path: Path):
    async with RemoteServer(token="right", legacy=True) as server:
        pool = await ready_pool(tmp_path, server, config=remote(server, headers={"Authorization": "Bearer wrong"}))
        try:
            [status] = pool.statuses()
            tools = pool.tools()
            result = await call(pool, "echo", {"text": "x"})
        finally:
            await pool.aclose()
    assert status.state == "error" and "HTTP 401" in (status.error or "")
    assert status.last_http_error == "HTTP 401 on POST"
    assert "wrong" not in (status.error or "") and tools == []
    assert result.is_error and "not available" in result.text


async def test_an_expired_mcp_session_is_started_again_and_the_call_runs_once(tmp_path: Path, legacy_server):
    pool = await ready_pool(tmp_path, legacy_server)
    try:
        await call(pool, "echo", {"text": "before"})
        assert legacy_server.expire_sessions() == 1
        result = await call(pool, "echo", {"text": "after"})
        [status] = pool.statuses()
    finally:
        await pool.aclose()
    assert (result.is_error, result.text) == (False, "echo: after")
    # The 404 answered the call without running it; the retry on the new session ran it once.
    assert legacy_server.seen.calls["echo"] == 2
    assert status.restarts == 1 and "404" in (status.last_restart or "")


async def test_a_remote_server_restarted_mid_session_is_reconnected(tmp_path: Path, era: str):
    async with RemoteServer(legacy=era == "legacy") as server:
        pool = await ready_pool(tmp_path, server)
        try:
            assert not (await call(pool, "echo", {"text": "1"})).is_error
            await server.restart()
            result = await call(pool, "echo", {"text": "2"})
            await state_becomes(pool, "ready")
        finally:
            await pool.aclose()
    assert (result.is_error, result.text) == (False, "echo: 2")


async def test_a_remote_server_that_is_down_fails_calls_at_once_and_comes_back(tmp_path: Path, legacy_server):
    pool = await ready_pool(tmp_path, legacy_server)
    try:
        await legacy_server.stop()
        await state_becomes(pool, "error")
        [down] = pool.statuses()
        tools_while_down = pool.tools()
        result = await call(pool, "echo", {"text": "x"})
        await legacy_server.start()
        await state_becomes(pool, "ready")
        back = await call(pool, "echo", {"text": "y"})
    finally:
        await pool.aclose()
    assert "cannot reach the server" in (down.error or "") and "trying again" in (down.error or "")
    assert tools_while_down == []
    assert result.is_error and "is not available" in result.text and "cannot reach" in result.text
    assert (back.is_error, back.text) == (False, "echo: y")


async def test_a_remote_servers_new_tools_reach_the_catalog(tmp_path: Path, era: str):
    changed = anyio.Event()
    async with RemoteServer(legacy=era == "legacy") as server:
        pool = await ready_pool(tmp_path, server, on_tools_changed=lambda name: changed.set())
        try:
            await call(pool, "add_tool", {"name": "lookup"})
            with anyio.fail_after(BOUND):
                await changed.wait()
            result = await call(pool, "lookup", {"text": "q"})
        finally:
            await pool.aclose()
    assert (result.is_error, result.text) == (False, "lookup: q")


async def test_a_remote_calls_progress_reaches_the_caller(tmp_path: Path, era: str):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with RemoteServer(legacy=era == "legacy") as server:
        pool = await ready_pool(tmp_path, server)
        try:
            result = await call(pool, "progress", {"steps": 2}, on_progress=on_progress)
        finally:
            await pool.aclose()
    assert result.text == "done"
    assert seen == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]


async def test_a_cancelled_remote_call_is_cancelled_on_the_server(tmp_path: Path, era: str):
    async with RemoteServer(legacy=era == "legacy") as server:
        pool = await ready_pool(tmp_path, server)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, pool, "block")
                with anyio.fail_after(BOUND):
                    await server.seen.started.wait()
                tg.cancel_scope.cancel()  # as stopping the session does
            with anyio.fail_after(BOUND):
                await server.seen.cancelled.wait()
            after = await call(pool, "echo", {"text": "still here"})
        finally:
            await pool.aclose()
    assert after.text == "echo: still here"


async def test_a_remote_call_that_takes_too_long_times_out_and_is_cancelled(tmp_path: Path, legacy_server):
    pool = await ready_pool(tmp_path, legacy_server)
    try:
        result = await call(pool, "block", timeout=0.5)
        with anyio.fail_after(BOUND):
            await legacy_server.seen.cancelled.wait()
    finally:
        await pool.aclose()
    assert result.is_error and "timed out after 0.5 s" in result.text


async def test_an_sse_server_is_called_and_reconnected_after_a_restart(tmp_path: Path):
    async with RemoteServer(transport="sse") as server:
        pool = await ready_pool(tmp_path, server)
        try:
            first = await call(pool, "echo", {"text": "1"})
            await server.restart()
            # The event stream's end is the connection's: the pool reconnects without a call.
            await state_becomes(pool, "ready", restarts=1)
            second = await call(pool, "echo", {"text": "2"})
            [status] = pool.statuses()
        finally:
            await pool.aclose()
    assert (first.text, second.text) == ("echo: 1", "echo: 2")
    assert status.restarts == 1 and status.url == server.url
