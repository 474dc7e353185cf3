"""The WebSocket against a real server: auth, live events, resume with since, answers, origin."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import only_servers
from backend.testing.web import serve_scripted


@pytest.fixture
def server(tmp_path):
    with serve_scripted(tmp_path, mcp_servers=only_servers("file")) as harness:
        yield harness


def ws_url(server, token: str | None = None) -> str:
    return server.url.replace("http", "ws") + f"/ws?token={token if token is not None else server.token}"


async def next_of(ws, type_: str, timeout: float = 15) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            message = json.loads(await ws.recv())
            if message.get("type") == type_:
                return message


async def test_a_bad_token_closes_the_socket_with_4001(server):
    async with connect(ws_url(server, "wrong")) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd.code == 4001


async def test_a_page_from_another_origin_is_refused(server):
    async with connect(ws_url(server), additional_headers={"Origin": "http://evil.example"}) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd.code == 4003


async def test_live_events_arrive_in_seq_order_without_gaps(server):
    server.model.push(Reply(text="hi there"))
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": None}))
        await next_of(ws, "subscribed")
        session = server.call(server.host.runner.create(prompt="hello"))
        persisted = []
        async with asyncio.timeout(15):
            while True:
                event = json.loads(await ws.recv())
                if not event.get("ephemeral"):
                    persisted.append(event)
                if event["type"] == "session.status" and event["data"]["status"] == "completed":
                    break
    assert {e["session_id"] for e in persisted} == {session.id}
    assert [e["seq"] for e in persisted] == list(range(1, len(persisted) + 1))


async def test_a_reconnecting_client_gets_exactly_what_it_missed(server):
    server.model.push(Reply(text="done"))
    session = server.call(server.host.runner.create(prompt="hello"))
    server.call(server.host.runner.wait(session.id, timeout=30))
    stored = server.call(server.host.store.list_events(session.id))
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": None, "since": {session.id: 3}}))
        reply = await next_of(ws, "subscribed")
        received = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(reply["replayed"])]
        await ws.send(json.dumps({"type": "ping"}))
        assert (await next_of(ws, "pong"))["type"] == "pong"
    assert [e["seq"] for e in received] == [e.seq for e in stored if e.seq > 3]


async def test_an_approval_can_be_answered_over_the_socket(server):
    server.model.push(
        Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "a.txt", "content": "1"})]),
        Reply(text="written"),
    )
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": None}))
        await next_of(ws, "subscribed")
        session = server.call(server.host.runner.create(prompt="write"))
        approval = (await next_of(ws, "approval.requested"))["data"]
        await ws.send(json.dumps({"type": "answer", "id": approval["id"], "decision": "allow_once"}))
        assert (await next_of(ws, "answered"))["id"] == approval["id"]
        await ws.send(json.dumps({"type": "answer", "id": approval["id"], "decision": "deny"}))
        assert "already" in (await next_of(ws, "error"))["message"]
    done = server.call(server.host.runner.wait(session.id, timeout=30))
    assert done.status == "completed"
    assert (server.workspace / "a.txt").read_text() == "1"


async def test_a_seq_number_beyond_what_the_store_holds_is_an_error_message_not_a_crash(server):
    # 2**63 made the driver raise OverflowError (issue 13, item 11); the socket stays usable.
    server.model.push(Reply(text="done"))
    session = server.call(server.host.runner.create(prompt="hello"))
    server.call(server.host.runner.wait(session.id, timeout=30))
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": session.id, "since": 2**63}))
        assert (await next_of(ws, "error"))["message"] == "since must be a seq number"
        await ws.send(json.dumps({"type": "subscribe", "session_id": None, "since": {session.id: 2**63}}))
        assert (await next_of(ws, "error"))["message"] == "since must map session ids to seq numbers"
        await ws.send(json.dumps({"type": "subscribe", "session_id": session.id, "since": 2**63 - 1}))
        assert (await next_of(ws, "subscribed"))["replayed"] == 0
