"""The host-wide live channel of servers over the WebSocket: a server's new tools, and servers
added or removed by an admin, reach every dashboard that asked for them, with no reload."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from backend.mcp.config import McpServerConfig
from backend.testing.harness import only_servers
from backend.testing.web import serve_scripted

FEATURES_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "client_features_server.py"
ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "echo_server.py"
BOUND = 30


@pytest.fixture
def server(tmp_path):
    features = McpServerConfig(command=sys.executable, args=[str(FEATURES_SERVER)])
    with serve_scripted(tmp_path, mcp_servers=only_servers() | {"feat": features}) as harness:
        harness.call(harness.host.pool.wait_ready(timeout=BOUND), timeout=BOUND + 5)
        yield harness


def ws_url(server) -> str:
    return server.url.replace("http", "ws") + f"/ws?token={server.token}"


async def servers_until(ws, predicate) -> dict:
    """The first servers.changed message whose servers (by name) satisfy `predicate`, bounded."""
    async with asyncio.timeout(BOUND):
        while True:
            message = json.loads(await ws.recv())
            if message.get("type") == "servers.changed":
                by_name = {s["name"]: s for s in message["servers"]}
                if predicate(by_name):
                    return message


def tools_of(server: dict) -> set[str]:
    return {tool["name"] for tool in server["tools"]}


async def test_subscribing_answers_at_once_with_every_server(server):
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "servers.subscribe"}))
        message = await servers_until(ws, lambda s: True)
    servers = {s["name"]: s for s in message["servers"]}
    assert servers["feat"]["state"] == "ready"
    assert "mcp__feat__add_tool" in tools_of(servers["feat"])
    # The built-ins this test switched off are listed as such, not hidden.
    assert servers["memory"]["enabled"] is False and servers["memory"]["builtin"] is True


async def test_a_tool_the_server_adds_reaches_a_subscribed_dashboard_live(server):
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "servers.subscribe"}))
        await servers_until(ws, lambda s: "feat" in s)
        added = server.call(
            server.host.pool.call("mcp__feat__add_tool", {"name": "late"}, workspace=server.workspace, session_id="s")
        )
        assert not added.is_error, added.text
        message = await servers_until(ws, lambda s: "mcp__feat__late" in tools_of(s["feat"]))
    assert "feat" in message["changed"]
    feat = next(s for s in message["servers"] if s["name"] == "feat")
    late = next(t for t in feat["tools"] if t["name"] == "mcp__feat__late")
    assert (late["policy"], late["effective_policy"]) == (None, "ask")


async def test_a_server_an_admin_adds_and_removes_shows_starting_ready_and_gone(server):
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "servers.subscribe"}))
        await servers_until(ws, lambda s: "echo" not in s)
        entry = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
        server.call(server.host.servers.add("echo", entry))
        ready = await servers_until(ws, lambda s: "echo" in s and s["echo"]["state"] == "ready")
        assert "mcp__echo__echo" in tools_of({s["name"]: s for s in ready["servers"]}["echo"])
        server.call(server.host.servers.remove("echo"))
        gone = await servers_until(ws, lambda s: "echo" not in s)
    assert "echo" in gone["changed"]


async def test_a_socket_that_did_not_subscribe_gets_no_server_news(server):
    async with connect(ws_url(server)) as watching, connect(ws_url(server)) as other:
        await watching.send(json.dumps({"type": "servers.subscribe"}))
        await servers_until(watching, lambda s: "feat" in s)
        server.call(
            server.host.pool.call("mcp__feat__add_tool", {"name": "quiet"}, workspace=server.workspace, session_id="s")
        )
        await servers_until(watching, lambda s: "mcp__feat__quiet" in tools_of(s["feat"]))
        # The news went out before this ping: had `other` been sent it, it would come first.
        await other.send(json.dumps({"type": "ping"}))
        async with asyncio.timeout(BOUND):
            first = json.loads(await other.recv())
    assert first["type"] == "pong"


async def test_a_changed_policy_reaches_subscribed_dashboards_as_the_tools_effective_policy(server):
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "servers.subscribe"}))
        await servers_until(ws, lambda s: "feat" in s)
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}) as client:
            response = await client.put(f"{server.url}/api/policies", json={"policies": {"mcp__feat": "deny"}})
        assert response.status_code == 200
        message = await servers_until(
            ws, lambda s: all(t["effective_policy"] == "deny" for t in s["feat"]["tools"])
        )
    assert "feat" in message["changed"]


async def test_after_unsubscribing_a_socket_hears_no_more_server_news(server):
    async with connect(ws_url(server)) as ws, connect(ws_url(server)) as witness:
        for socket in (ws, witness):
            await socket.send(json.dumps({"type": "servers.subscribe"}))
            await servers_until(socket, lambda s: "feat" in s)
        await ws.send(json.dumps({"type": "servers.unsubscribe"}))
        # Messages on a socket are handled in order: once this pong is back, so is the unsubscribe.
        await ws.send(json.dumps({"type": "ping"}))
        async with asyncio.timeout(BOUND):
            while json.loads(await ws.recv())["type"] != "pong":
                pass
        server.call(
            server.host.pool.call("mcp__feat__add_tool", {"name": "unheard"}, workspace=server.workspace, session_id="s")
        )
        await servers_until(witness, lambda s: "mcp__feat__unheard" in tools_of(s["feat"]))
        await ws.send(json.dumps({"type": "ping"}))
        async with asyncio.timeout(BOUND):
            first = json.loads(await ws.recv())
    assert first["type"] == "pong"
