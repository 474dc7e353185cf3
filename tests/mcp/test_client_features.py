"""What the pool's client connection offers a server (backend/mcp/server.py), against real processes.

tests/mcp/fixtures/client_features_server.py uses those offers: it reads the client's name,
asks for roots, reports progress and adds tools at run time. Each test runs it as a modern
(2026-07-28) server and as a handshake-era one (`--legacy`, like the reference servers), since
the two eras carry roots and list changes differently. No sleeps: every wait is bounded.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig

BOUND = 30  # seconds; a bound on waits, never a timing assertion
FEATURES_SERVER = Path(__file__).parent / "fixtures" / "client_features_server.py"



@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    """Which protocol era the fixture server speaks: 2026-07-28, or the handshake era."""
    return request.param


def features_config(era: str) -> McpServerConfig:
    args = [str(FEATURES_SERVER), *(["--legacy"] if era == "legacy" else [])]
    return McpServerConfig(command=sys.executable, args=args, start_timeout=BOUND)


async def ready_pool(era: str, tmp_path: Path, **kwargs) -> McpPool:
    pool = McpPool({"feat": features_config(era)}, log_dir=tmp_path / "logs", **kwargs)
    await pool.start()
    with anyio.fail_after(BOUND):
        await pool.wait_ready()
    return pool


async def test_the_pool_introduces_itself_as_overseer(era: str, tmp_path: Path):
    pool = await ready_pool(era, tmp_path)
    try:
        result = await pool.call("mcp__feat__client_info", {}, workspace=tmp_path, session_id="s1")
    finally:
        await pool.aclose()
    assert not result.is_error, result.text
    assert json.loads(result.text) == {"name": "overseer", "version": version("overseer")}


async def test_a_call_offers_its_sessions_workspace_as_the_servers_root(era: str, tmp_path: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    pool = await ready_pool(era, tmp_path)
    try:
        one = await pool.call("mcp__feat__roots", {}, workspace=first, session_id="s1")
        two = await pool.call("mcp__feat__roots", {}, workspace=second, session_id="s2")
    finally:
        await pool.aclose()
    assert not one.is_error and not two.is_error, (one.text, two.text)
    assert json.loads(one.text) == [first.as_uri()]
    assert json.loads(two.text) == [second.as_uri()]


async def test_a_handshake_era_server_is_told_when_the_calling_workspace_changes(tmp_path: Path):
    # Only the handshake era: 2026-07-28 has no client notifications, each call carries its root.
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    pool = await ready_pool("legacy", tmp_path)
    try:
        await pool.call("mcp__feat__roots", {}, workspace=first, session_id="s1")
        # The same workspace again is no change; then another session's call is.
        await pool.call("mcp__feat__roots", {}, workspace=first, session_id="s1")
        with anyio.fail_after(BOUND):
            changes = await pool.call("mcp__feat__roots_changes", {"at_least": 1}, workspace=second, session_id="s2")
        again = await pool.call("mcp__feat__roots", {}, workspace=second, session_id="s2")
    finally:
        await pool.aclose()
    assert changes.text == "1"
    assert json.loads(again.text) == [second.as_uri()]



async def test_a_tool_the_server_adds_at_run_time_joins_the_catalog_and_can_be_called(era: str, tmp_path: Path):
    changed = anyio.Event()
    servers: list[str] = []

    def on_tools_changed(server: str) -> None:
        servers.append(server)
        changed.set()

    pool = await ready_pool(era, tmp_path, on_tools_changed=on_tools_changed)
    try:
        assert pool.tool("mcp__feat__late") is None
        added = await pool.call("mcp__feat__add_tool", {"name": "late"}, workspace=tmp_path, session_id="s1")
        assert not added.is_error, added.text
        with anyio.fail_after(BOUND):
            await changed.wait()
        assert servers == ["feat"]
        assert pool.tool("mcp__feat__late") is not None
        assert "mcp__feat__late" in {tool.name for tool in pool.tools()}
        result = await pool.call("mcp__feat__late", {"text": "hi"}, workspace=tmp_path, session_id="s1")
    finally:
        await pool.aclose()
    assert result.text == "late: hi"


async def test_a_calls_progress_reports_reach_the_callers_callback_in_order(era: str, tmp_path: Path):
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    pool = await ready_pool(era, tmp_path)
    try:
        result = await pool.call(
            "mcp__feat__progress", {"steps": 3}, workspace=tmp_path, session_id="s1", on_progress=on_progress
        )
    finally:
        await pool.aclose()
    assert result.text == "done"
    assert reports == [(step, 3, f"step {step} of 3") for step in (1, 2, 3)]
