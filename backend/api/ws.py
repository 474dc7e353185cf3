"""The WebSocket: live events with resume, and approvals answered over the socket.

A client subscribes to all sessions or one, optionally with the seq it saw last (per session),
and gets exactly what it missed, then everything new. A bad credential closes with 4001; a
browser page from another origin is refused.

Replay is bounded (backend/api/replay_limits.py): one `subscribe` replays at most `REPLAY_PAGE`
events. When more are waiting, `subscribed` says `"more": true`, the page follows, then
`{"type": "replay.more"}`; no live events come until the client subscribes again with the seqs
it now has, which continues exactly where the page ended. A client that replays too often gets
an error with `retry_after` (seconds) instead.

Servers are host-wide, not a session's: `{"type": "servers.subscribe"}` answers with every
server at once and again whenever one changes (state, tools, added, removed, policies), as
`{"type": "servers.changed", "changed": [names], "servers": [as GET /api/servers]}`, until
`servers.unsubscribe`. Each message is the whole list, so one a client misses is made good by
the next.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from backend.api.deps import MAX_STORED_INT, credential_of
from backend.api.routes.servers import server_views
from backend.api.replay_limits import REPLAY_PAGE, ConnectionReplays, ReplayRate, ReplaysThrottled
from backend.api.schemas import AnswerApproval
from backend.app.servers import ServerWatch
from backend.app.services import AppServices, Subscription
from backend.domain.errors import ApprovalError, DomainError

log = logging.getLogger(__name__)
router = APIRouter()

CLOSE_UNAUTHORIZED = 4001
CLOSE_FORBIDDEN = 4003
CLOSE_POLICY = 1008


def origin_allowed(websocket: WebSocket, allowed: list[str]) -> bool:
    """Same origin as the Host header, a configured origin, or no Origin (non-browser clients)."""
    origin = websocket.headers.get("origin")
    if not origin:
        return True
    if origin in allowed:
        return True
    return urlsplit(origin).netloc == websocket.headers.get("host", "")


@router.websocket("/ws")
async def events_socket(websocket: WebSocket) -> None:
    app = websocket.app
    principal = app.state.auth.authenticate(credential_of(websocket))
    await websocket.accept()
    if principal is None:
        await websocket.close(code=CLOSE_UNAUTHORIZED, reason="authentication required")
        return
    if not origin_allowed(websocket, app.state.services.settings.cors_origins):
        await websocket.close(code=CLOSE_FORBIDDEN, reason="origin not allowed")
        return
    connection = _Connection(websocket, app.state.services, principal)
    await connection.serve()


class _Connection:
    def __init__(self, websocket: WebSocket, services: AppServices, principal: Any) -> None:
        self.websocket = websocket
        self.services = services
        self.principal = principal
        self.sub: Subscription | None = None
        self.pump: asyncio.Task[None] | None = None
        self.server_watch: ServerWatch | None = None
        self.server_pump: asyncio.Task[None] | None = None
        self.send_lock = asyncio.Lock()
        self.replays = ConnectionReplays()
        self.replay_rate: ReplayRate = websocket.app.state.replay_rate
        where = websocket.client.host if websocket.client else "unknown"
        self.client = f"{principal.kind}:{principal.name}@{where}"

    async def send(self, payload: dict[str, Any]) -> None:
        async with self.send_lock:
            await self.websocket.send_json(payload)

    async def serve(self) -> None:
        try:
            while True:
                message = await self.websocket.receive_json()
                await self.handle(message)
        except WebSocketDisconnect:
            pass
        except ValueError:
            await self.websocket.close(code=1003, reason="messages must be JSON objects")
        finally:
            self.unsubscribe()
            self.unwatch_servers()

    async def handle(self, message: Any) -> None:
        if not isinstance(message, dict):
            await self.send({"type": "error", "message": "messages must be JSON objects"})
            return
        kind = message.get("type")
        if kind == "subscribe":
            await self.subscribe(message.get("session_id"), message.get("since"))
        elif kind == "answer":
            await self.answer(message)
        elif kind == "servers.subscribe":
            await self.watch_servers()
        elif kind == "servers.unsubscribe":
            self.unwatch_servers()
        elif kind == "ping":
            await self.send({"type": "pong"})
        else:
            await self.send({"type": "error", "message": f"unknown message type {kind!r}"})

    async def subscribe(self, session_id: Any, since: Any) -> None:
        self.unsubscribe()
        bus = self.services.events
        if session_id is None:
            if since is not None and not (
                isinstance(since, dict) and all(_is_seq(v) for v in since.values())
            ):
                await self.send({"type": "error", "message": "since must map session ids to seq numbers"})
                return
            replays = bool(since)  # without `since`, only what happens from now on
        elif isinstance(session_id, str):
            if since is not None and not _is_seq(since):
                await self.send({"type": "error", "message": "since must be a seq number"})
                return
            replays = True  # from `since`, or from the start
        else:
            await self.send({"type": "error", "message": "session_id must be a string or null"})
            return
        if replays:
            try:
                self.replay_rate.take(self.client)
            except ReplaysThrottled as exc:
                await self.send({"type": "error", "message": str(exc), "retry_after": exc.retry_after})
                return
        if session_id is None:
            missed, sub = await bus.subscribe_all_from(since or {})
        else:
            missed, sub = await bus.subscribe_from(session_id, since or 0)
        page, more = missed[:REPLAY_PAGE], len(missed) > REPLAY_PAGE
        if more:
            bus.unsubscribe(sub)  # live events wait until the client has paged up to them
        else:
            self.sub = sub
        await self.send({"type": "subscribed", "session_id": session_id, "replayed": len(page), "more": more})
        for event in page:
            await self.send(event.model_dump(mode="json"))
        self.replays.add(len(page))
        if not more:
            self.pump = asyncio.create_task(self._pump(sub))
            return
        await self.send(
            {
                "type": "replay.more",
                "session_id": session_id,
                "message": f"replayed {len(page)} events, the most one subscribe sends: "
                "subscribe again with since set to the last seq you have of each session",
            }
        )
        if self.replays.exhausted:
            await self.websocket.close(
                code=CLOSE_POLICY, reason=f"replayed {self.replays.replayed} events, the most one connection may"
            )

    async def _pump(self, sub: Subscription) -> None:
        try:
            async for event in sub:
                await self.send(event.model_dump(mode="json"))
            if sub.overflowed:
                await self.send({"type": "error", "message": "fell behind; resubscribe with since"})
        except (WebSocketDisconnect, RuntimeError):
            pass

    def unsubscribe(self) -> None:
        if self.sub is not None:
            self.services.events.unsubscribe(self.sub)
            self.sub = None
        if self.pump is not None:
            self.pump.cancel()
            self.pump = None

    async def watch_servers(self) -> None:
        """Send every server now and whenever one changes (again at once if already watching)."""
        if self.server_watch is None:
            self.server_watch = self.services.servers.feed.watch()
            self.server_pump = asyncio.create_task(self._pump_servers(self.server_watch))
        await self.send_servers(set())

    async def send_servers(self, changed: set[str]) -> None:
        servers = [view.model_dump(mode="json") for view in server_views(self.services)]
        await self.send({"type": "servers.changed", "changed": sorted(changed), "servers": servers})

    async def _pump_servers(self, watch: ServerWatch) -> None:
        try:
            while True:
                await self.send_servers(await watch.changes())
        except (WebSocketDisconnect, RuntimeError):
            pass

    def unwatch_servers(self) -> None:
        if self.server_watch is not None:
            self.services.servers.feed.unwatch(self.server_watch)
            self.server_watch = None
        if self.server_pump is not None:
            self.server_pump.cancel()
            self.server_pump = None

    async def answer(self, message: dict[str, Any]) -> None:
        approval_id = message.get("id")
        try:
            body = AnswerApproval.model_validate({k: v for k, v in message.items() if k not in ("type", "id")})
            await self.services.approvals.answer(
                str(approval_id), body.to_decision(), by=self.principal, via="websocket"
            )
        except ValidationError as exc:
            await self.send({"type": "error", "id": approval_id, "message": f"bad answer: {exc.errors()[0]['msg']}"})
        except (ApprovalError, DomainError) as exc:
            await self.send({"type": "error", "id": approval_id, "message": str(exc)})
        else:
            await self.send({"type": "answered", "id": approval_id})


def _is_seq(value: Any) -> bool:
    """A seq number the store can compare with (a bool is not one, though Python says int)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_STORED_INT
