"""The credential is checked before any body is read (issue 31, item 5): bytes the app pulls are counted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from backend.api.auth_first import UNAUTHENTICATED_CAP, needs_credential
from backend.api.body_limit import MIB

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

CHUNK = b"[{}," * (MIB // 4)  # 1 MiB of the JSON that cost 2.3 GB when parsed


@dataclass
class Upload:
    """A request whose body is `total` bytes sent in 1 MiB chunks; counts what the app pulls."""

    total: int
    pulled: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)

    async def receive(self) -> dict[str, Any]:
        chunk = CHUNK[: max(0, min(len(CHUNK), self.total - self.pulled))]
        self.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": self.pulled < self.total}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return next(m["status"] for m in self.sent if m["type"] == "http.response.start")


def scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"test"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }


async def test_a_90_mib_body_without_a_token_is_refused_401_before_the_app_reads_a_byte(api):
    upload = Upload(total=90 * MIB)  # under POST /api/sessions' own cap (96 MiB): declared...
    await api.app(scope("POST", "/api/sessions", [(b"content-length", str(90 * MIB).encode())]), upload.receive, upload.send)
    assert (upload.status, upload.pulled) == (401, 0)
    chunked = Upload(total=90 * MIB)  # ...or chunked, with no length at all
    await api.app(scope("POST", "/api/sessions/x/messages", [(b"transfer-encoding", b"chunked")]), chunked.receive, chunked.send)
    assert (chunked.status, chunked.pulled) == (401, 0)


async def test_a_wrong_token_is_refused_as_early_as_none(api):
    upload = Upload(total=10 * MIB)
    headers = [(b"authorization", b"Bearer wrong"), (b"transfer-encoding", b"chunked")]
    await api.app(scope("PUT", "/api/permissions", headers), upload.receive, upload.send)
    assert (upload.status, upload.pulled) == (401, 0)


async def test_a_public_route_without_a_credential_takes_no_more_than_a_login_needs(api):
    for path in ("/api/auth/login", "/answer/some-signed-token", "/mcp"):
        upload = Upload(total=8 * MIB)
        await api.app(scope("POST", path, [(b"transfer-encoding", b"chunked")]), upload.receive, upload.send)
        # Refused (a bad signed link, no credential for /mcp) or cut at the first chunk past the cap.
        assert upload.status in (401, 403, 413), path
        assert upload.pulled <= UNAUTHENTICATED_CAP + len(CHUNK), path


async def test_a_credential_lets_a_body_through_to_its_route(api):
    token = api.app.state.auth.token
    body = b'{"prompt": "hi", "mode": "no-such-mode"}'
    sent: list[dict[str, Any]] = []
    pulled = False

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"authorization", f"Bearer {token}".encode()), (b"content-length", str(len(body)).encode())]
    await api.app(scope("POST", "/api/sessions", headers), receive, send)
    assert pulled and sent[0]["status"] == 400  # the route read it and named the unknown mode


async def test_only_health_and_login_under_api_are_public_and_preflights_pass():
    assert not needs_credential("GET", "/api/health")
    assert not needs_credential("POST", "/api/auth/login")
    assert not needs_credential("OPTIONS", "/api/sessions")
    assert needs_credential("POST", "/api/auth/logout")
    assert needs_credential("GET", "/api/healthz")
