"""An error answered by a middleware before the app has read the request's body."""

from __future__ import annotations

import json

from starlette.types import Scope, Send


def announces_body(scope: Scope) -> bool:
    """True when the request says a body follows (a length above 0, or chunked)."""
    headers = dict(scope.get("headers", []))
    return b"transfer-encoding" in headers or headers.get(b"content-length", b"0") not in (b"0", b"")


async def answer_early(
    scope: Scope, send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """`{"detail": ...}` with `status`; the connection closes after it when a body was left unread."""
    all_headers = [(b"content-type", b"application/json"), *(headers or [])]
    if announces_body(scope):  # left unread: the connection cannot carry another request after it
        all_headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})
