"""The servers a person manages: a restarted server says how often and why."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import pytest_asyncio

from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool

pytestmark = pytest.mark.asyncio(loop_scope="module")

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "echo_server.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """This module's own pool (it crashes a server): the fixture echo server only."""
    root = tmp_path_factory.mktemp("echo-pool")
    config = McpServerConfig(command=sys.executable, args=[str(ECHO_SERVER)], start_timeout=30)
    async with McpPool({"echo": config}, log_dir=root / "logs") as started:
        await started.wait_ready(timeout=60)
        yield started


async def test_a_crashed_server_shows_how_often_and_why_it_was_restarted(api, tmp_path):
    before = {s["name"]: s for s in (await api.client.get("/api/servers")).json()}["echo"]
    assert (before["restarts"], before["last_restart"]) == (0, None)
    with anyio.fail_after(30):
        crashed = await api.host.pool.call("mcp__echo__crash", {}, workspace=tmp_path, session_id="s1")
        assert crashed.is_error
        await api.host.pool.wait_ready(timeout=30)
    after = {s["name"]: s for s in (await api.client.get("/api/servers")).json()}["echo"]
    assert after["restarts"] == 1
    assert after["last_restart"].startswith("crashed (exit code")
