"""A local stand-in for an ntfy server and a webhook endpoint: it records what it is sent.

ntfy's JSON publishing (`POST /` with `{"topic", "title", "message", "actions", ...}`) and any
webhook (apprise's `json://` posts `{"title", "message", ...}`) land in `received`; a test waits
for one with `next()`, bounded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(kw_only=True)
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(kw_only=True)
class Receiver:
    """`async with Receiver() as r:` serves on a free port of 127.0.0.1."""

    received: list[Received] = field(default_factory=list)
    port: int = 0
    _seen: int = 0
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._record)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def next(self, *, timeout: float = 30) -> Received:
        """The next request not yet returned by `next`."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.received) > self._seen)
            self._seen += 1
            return self.received[self._seen - 1]

    async def _record(self, request: web.Request) -> web.Response:
        body = await request.json()
        async with self._changed:
            self.received.append(Received(path=request.path, headers=dict(request.headers), body=body))
            self._changed.notify_all()
        return web.json_response({"id": "x", "event": "message"})
