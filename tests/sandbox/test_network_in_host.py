"""The network of a sandboxed command in a running host (issue 29): none but the egress proxy; an
allowlisted name is reached through it, the host's other loopback services are not, and a new host
is a `network` approval whose answer is honoured."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import TEST_PERSON, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXEC = "mcp__shell__exec"


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        body = f"hello from {self.server.server_address[1]}".encode()  # type: ignore[index]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the host's loopback: one the allowlist names, one it does not."""
    started = [ThreadingHTTPServer(("127.0.0.1", 0), _Hello) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in started]
    for thread in threads:
        thread.start()
    yield started[0].server_address[1], started[1].server_address[1]
    for server in started:
        server.shutdown()
        server.server_close()


def curl(url: str, *extra: str) -> Reply:
    command = " ".join(["curl -s -m 5 -w ' status=%{http_code}'", *extra, url])
    return Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": command})])


async def test_an_allowlisted_name_is_reached_through_the_proxy_and_nothing_else_is(
    tmp_path: Path, pool: McpPool, servers: tuple[int, int]
) -> None:
    listed, unlisted = servers
    script = [
        curl(f"http://localhost:{listed}/"),  # allowlisted: through the proxy
        curl(f"http://127.0.0.1:{listed}/", "--noproxy 127.0.0.1"),  # straight to the host's loopback
        curl(f"http://127.0.0.1:{unlisted}/", "--noproxy 127.0.0.1"),
        Reply(text="done"),
    ]
    settings = {
        "policies": {EXEC: "always_allow"},
        "sandbox": {"network": {"allow": [f"localhost:{listed}"]}},
    }
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        session = await h.run("fetch", timeout=60)
        proxied, direct, other = await h.host.store.list_tool_calls(session.id)
        assert await h.host.broker.pending() == []  # a direct connection asks nobody: it has no route
    assert f"hello from {listed}" in (proxied.result or ""), proxied.result
    for record in (direct, other):
        assert "hello from" not in (record.result or "")
        assert record.is_error


async def test_a_new_host_is_a_network_approval_and_its_answer_is_honoured(
    tmp_path: Path, pool: McpPool, servers: tuple[int, int]
) -> None:
    _, unlisted = servers
    url = f"http://127.0.0.1:{unlisted}/"
    script = [curl(url), curl(url), Reply(text="done")]
    settings = {"policies": {EXEC: "always_allow"}, "sandbox": {"network": {"enabled": True}}}
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        session = await h.start("fetch twice")
        decisions = [Decision(kind="deny", message="not that one"), Decision(kind="allow_once")]
        for decision in decisions:
            opened = await h.next_event("approval.requested", timeout=30)
            approval_id = opened.data["id"]
            pending = [a for a in await h.host.broker.pending() if a.id == approval_id]
            assert pending and pending[0].kind == "network", pending
            assert pending[0].arguments == {"host": "127.0.0.1", "port": unlisted, "scheme": "http"}
            await h.host.approvals.answer(approval_id, decision, by=TEST_PERSON, via="rest")
        done = await h.host.runner.wait(session.id, timeout=60)
        refused, allowed = await h.host.store.list_tool_calls(done.id)
    assert "status=403" in (refused.result or "") and "hello from" not in (refused.result or "")
    assert f"hello from {unlisted}" in (allowed.result or ""), allowed.result


async def test_an_agents_own_allowlist_opens_the_network_for_its_sessions_only(
    tmp_path: Path, pool: McpPool, servers: tuple[int, int]
) -> None:
    listed, _ = servers
    alpha, beta = (tmp_path / "alpha").resolve(), (tmp_path / "beta").resolve()
    alpha.mkdir()
    beta.mkdir()
    agents = [
        {"id": "alpha", "workspace": str(alpha), "sandbox": {"network": {"allow": [f"localhost:{listed}"]}}},
        {"id": "beta", "workspace": str(beta)},
    ]
    script = [curl(f"http://localhost:{listed}/"), Reply(text="done"), curl(f"http://localhost:{listed}/"), Reply(text="done")]
    settings = {"policies": {EXEC: "always_allow"}, "agents": agents}
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        first = await h.run("fetch", SessionOptions(agent="alpha"), timeout=60)
        second = await h.run("fetch", SessionOptions(agent="beta"), timeout=60)
        [reached] = await h.host.store.list_tool_calls(first.id)
        [cut_off] = await h.host.store.list_tool_calls(second.id)
        assert await h.host.broker.pending() == []  # no proxy for beta: nothing to ask about
    assert f"hello from {listed}" in (reached.result or ""), reached.result
    assert "hello from" not in (cut_off.result or "") and cut_off.is_error
