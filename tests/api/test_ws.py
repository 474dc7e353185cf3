"""The WebSocket against a real server: auth, live events, resume with since, answers, origin."""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from backend.api.replay_limits import REPLAY_PAGE, REPLAYS_PER_WINDOW, ConnectionReplays, ReplayRate, ReplaysThrottled
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


def many_events(server, count: int) -> str:
    """A session with `count` events after its own (notices, published straight to the bus)."""

    async def publish() -> str:
        session = await server.host.runner.create()
        for n in range(count):
            await server.host.bus.publish(session.id, "notice", {"text": f"note {n}"})
        return session.id

    return server.call(publish(), timeout=120)


async def replay_page(ws) -> tuple[dict, list[dict], dict | None]:
    """One subscribe's answer: `subscribed`, the events replayed, and `replay.more` if it came."""
    subscribed = await next_of(ws, "subscribed")
    events = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(subscribed["replayed"])]
    more = await next_of(ws, "replay.more") if subscribed["more"] else None
    return subscribed, events, more


async def test_a_subscribe_from_zero_replays_one_page_and_the_client_pages_on_with_its_last_seq(server):
    session_id = many_events(server, REPLAY_PAGE + 100)
    stored = [e.seq for e in server.call(server.host.store.list_events(session_id))]
    async with connect(ws_url(server)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": session_id, "since": 0}))
        first, page, more = await replay_page(ws)
        assert (first["replayed"], first["more"], more is not None) == (REPLAY_PAGE, True, True)
        await ws.send(json.dumps({"type": "subscribe", "session_id": session_id, "since": page[-1]["seq"]}))
        second, rest, more = await replay_page(ws)
        assert second["more"] is False and more is None
        # And from then on, live events: nothing between the pages and the live feed is lost.
        server.call(server.host.bus.publish(session_id, "notice", {"text": "live"}))
        live = await next_of(ws, "notice")
    assert [e["seq"] for e in page + rest] == stored
    assert live["seq"] == stored[-1] + 1


async def test_a_since_map_pages_too_and_the_dashboard_s_resubscribe_completes_it(server):
    a, b = many_events(server, 300), many_events(server, 300)
    async with connect(ws_url(server)) as ws:
        since = {a: 0, b: 0}
        received: list[dict] = []
        for _ in range(5):
            await ws.send(json.dumps({"type": "subscribe", "session_id": None, "since": since}))
            subscribed, events, more = await replay_page(ws)
            assert subscribed["replayed"] <= REPLAY_PAGE
            received += events
            for event in events:
                since[event["session_id"]] = max(since[event["session_id"]], event["seq"])
            if more is None:
                break
    for session_id in (a, b):
        stored = [e.seq for e in server.call(server.host.store.list_events(session_id))]
        assert [e["seq"] for e in received if e["session_id"] == session_id] == stored


async def test_a_client_that_replays_too_often_is_told_to_wait_and_gets_nothing_replayed(server):
    session_id = many_events(server, 3)
    async with connect(ws_url(server)) as ws:
        for _ in range(REPLAYS_PER_WINDOW):
            await ws.send(json.dumps({"type": "subscribe", "session_id": session_id, "since": 0}))
            await next_of(ws, "subscribed")
    async with connect(ws_url(server)) as again:  # a new connection is the same client
        await again.send(json.dumps({"type": "subscribe", "session_id": session_id, "since": 0}))
        refused = json.loads(await asyncio.wait_for(again.recv(), 5))
        assert refused["type"] == "error" and "too many replays" in refused["message"]
        assert 1 <= refused["retry_after"] <= 60
        await again.send(json.dumps({"type": "subscribe", "session_id": None}))  # live only: not a replay
        assert (await next_of(again, "subscribed"))["replayed"] == 0


def test_the_replay_rate_forgets_a_replay_once_its_window_has_passed():
    now = [0.0]
    rate = ReplayRate(limit=2, window=10, clock=lambda: now[0])
    rate.take("ann")
    rate.take("ann")
    rate.take("bob")
    with pytest.raises(ReplaysThrottled) as throttled:
        rate.take("ann")
    assert throttled.value.retry_after == 10
    now[0] = 10.5
    rate.take("ann")


def test_a_connection_that_has_replayed_its_share_is_exhausted():
    replays = ConnectionReplays(limit=3)
    replays.add(2)
    assert not replays.exhausted
    replays.add(1)
    assert replays.exhausted
