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

pytestmark = pytest.mark.parametrize("era", ["modern", "legacy"])


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
