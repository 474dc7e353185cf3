"""Request bodies are capped per route before anything reads them, authentication included.

Three 300 MB bodies without a token took the server from 315 MB to 2.1 GB: a caller nobody has
authenticated yet must not be able to make the process hold what it sends. A declared
Content-Length over the route's cap is refused (413) before the body is read; a body sent
without one (chunked) is counted as it arrives and cut off at the cap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class BodyCap:
    """The largest body a route takes: the first rule whose method and path prefix match wins."""

    method: str | None
    prefix: str
    limit: int


BODY_CAPS: tuple[BodyCap, ...] = (
    BodyCap(None, "/api/auth/", 64 * KIB),  # a name and a password
    BodyCap(None, "/login", 64 * KIB),
    # A message may carry 10 images of up to 8 MB of base64 each (backend/api/schemas.py).
    BodyCap("POST", "/api/sessions", 96 * MIB),
    BodyCap(None, "/mcp", 16 * MIB),  # a prompt or a tool call's arguments
)
DEFAULT_CAP = 4 * MIB
"""Everything else: settings, modes, skills, schedules, answers, invocations."""


def body_cap(method: str, path: str) -> int:
    for cap in BODY_CAPS:
        if (cap.method is None or cap.method == method) and path.startswith(cap.prefix):
            return cap.limit
    return DEFAULT_CAP


def _too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"the request body is larger than this route takes ({limit:,} bytes)")


class BodyLimit:
    """ASGI middleware: 413 for a body over its route's cap, read or declared."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await serve_capped(self.app, scope, receive, send, body_cap(scope["method"], scope["path"]))


async def serve_capped(app: ASGIApp, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    """Run `app` on an HTTP request whose body may hold at most `limit` bytes (else 413)."""
    declared = dict(scope.get("headers", [])).get(b"content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        await _refuse(send, limit)
        return
    received = 0

    async def capped() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise _too_large(limit)  # the app's exception middleware answers 413
        return message

    await app(scope, capped, send)


async def _refuse(send: Send, limit: int) -> None:
    error = _too_large(limit)
    body = json.dumps({"detail": error.detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})
