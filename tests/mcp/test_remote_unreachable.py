"""A remote MCP server that cannot be reached says so, and is not taken for one wanting a sign-in
(issue 33, item 14): the Servers page badges it "Unreachable: name not found", not "Not signed in".

DNS for `.invalid` fails locally (RFC 6761) and a closed loopback port refuses: no network needed.
No sleeps: every wait is on the runner's change event, bounded.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import anyio

from backend.app.server_sign_ins import ServerSignIns
from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.server import ServerRunner

BOUND = 20  # seconds; a bound on waits, never a timing assertion


async def until(pool: McpPool, condition: Callable[[ServerRunner], bool]) -> None:
    runner = pool._runners["docs"]  # its change event is what the pool's own waits use
    with anyio.fail_after(BOUND):
        while not condition(runner):
            changed = runner._changed
            assert changed is not None
            await changed.wait()


def failed(runner: ServerRunner) -> bool:
    return runner.status().state == "error"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def state_of(tmp_path: Path, url: str):
    pool = McpPool({"docs": McpServerConfig(type="http", url=url, start_timeout=BOUND)}, log_dir=tmp_path / "logs")
    await pool.start()
    try:
        await until(pool, failed)
        return pool.statuses()[0], ServerSignIns(pool).state("docs")
    finally:
        await pool.aclose()


async def test_a_remote_server_whose_name_does_not_resolve_is_unreachable_not_waiting_for_a_sign_in(tmp_path: Path):
    status, sign_in = await state_of(tmp_path, "http://no-such-host.invalid/mcp")
    assert status.unreachable == "name not found" and not status.needs_sign_in
    assert sign_in.unreachable == "name not found" and not sign_in.needs_sign_in and not sign_in.signed_in


async def test_a_remote_server_refusing_the_connection_is_unreachable_with_that_reason(tmp_path: Path):
    status, sign_in = await state_of(tmp_path, f"http://127.0.0.1:{closed_port()}/mcp")
    assert status.unreachable == "connection refused"
    assert sign_in.unreachable == "connection refused"
