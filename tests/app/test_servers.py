"""ServerFailures: a failed MCP server is told once, on stderr and to each running session."""

from __future__ import annotations

import logging
import sys

from backend.mcp.config import McpServerConfig
from backend.testing import Reply
from backend.testing.harness import only_servers, scripted_host

BROKEN = McpServerConfig(
    command=sys.executable,
    args=["-c", "import sys; print('boom: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)"],
)


async def server_failed_events(host, session_id: str) -> list[dict]:
    return [e.data for e in await host.store.list_events(session_id) if e.type == "server.failed"]


async def test_a_failed_server_is_logged_once_and_told_once_to_each_session_before_its_turn(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="backend.app.servers")
    script = [Reply(text="first"), Reply(text="second"), Reply(text="other")]
    async with scripted_host(tmp_path, script, mcp_servers={**only_servers(), "broken": BROKEN}) as h:
        first = await h.run("one")
        await h.host.runner.send(first.id, "two")
        first = await h.host.runner.wait(first.id, timeout=30)
        other = await h.run("three")
        told_first = await server_failed_events(h.host, first.id)
        told_other = await server_failed_events(h.host, other.id)
        events = [e.type for e in await h.host.store.list_events(first.id)]
    assert first.status == other.status == "completed"
    assert [t["server"] for t in told_first] == [t["server"] for t in told_other] == ["broken"]
    assert "boom: GITHUB_TOKEN is not set" in told_first[0]["error"]
    # Told before the turn went on without the server's tools: ahead of the model's answer.
    assert events.index("server.failed") < events.index("usage")
    logged = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert len(logged) == 1 and "boom: GITHUB_TOKEN is not set" in logged[0]


async def test_working_servers_make_no_report(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="backend.app.servers")
    async with scripted_host(tmp_path, [Reply(text="fine")], mcp_servers=only_servers("shell")) as h:
        session = await h.run("hi")
        assert await server_failed_events(h.host, session.id) == []
    assert not [r for r in caplog.records if r.name == "backend.app.servers"]
