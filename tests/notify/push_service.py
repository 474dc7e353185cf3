"""A local Web Push service for tests: checks the VAPID signature, decrypts as the browser would.

A test subscribes with `subscription()` (a P-256 key pair and an auth secret made here, as a
browser makes them). Each push is accepted (201) only when its `Authorization: vapid t=..., k=...`
carries an ES256 JWT signed by the key `k`, for this service's origin, not expired; the body is
then decrypted (aes128gcm) with the subscription's private key and kept in `received`.
`gone` makes the endpoint answer 410, as a push service does for an unsubscribed browser.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(kw_only=True)
class PushService:
    received: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    vapid_keys: list[str] = field(default_factory=list)
    gone: bool = False
    port: int = 0
    _browser_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    _auth: bytes = field(default_factory=lambda: b"0123456789abcdef")
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def subscription(self) -> dict[str, Any]:
        public = self._browser_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": f"{self.origin}/push/abc", "keys": {"p256dh": b64e(public), "auth": b64e(self._auth)}}

    async def __aenter__(self) -> PushService:
        app = web.Application()
        app.router.add_post("/push/{id}", self._push)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def next(self, *, timeout: float = 30) -> dict[str, Any]:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: bool(self.received or self.refused))
            if self.refused:
                raise AssertionError(f"a push was refused: {self.refused}")
            return self.received.pop(0)

    async def _push(self, request: web.Request) -> web.Response:
        body = await request.read()
        problem = self._check_vapid(request.headers.get("Authorization", ""))
        async with self._changed:
            if problem:
                self.refused.append(problem)
            elif not self.gone:
                plain = http_ece.decrypt(body, private_key=self._browser_key, auth_secret=self._auth, version="aes128gcm")
                self.received.append(json.loads(plain))
            self._changed.notify_all()
        if problem:
            return web.Response(status=401, text=problem)
        return web.Response(status=410 if self.gone else 201)

    def _check_vapid(self, header: str) -> str | None:
        if not header.startswith("vapid "):
            return "no vapid authorization"
        fields = dict(part.strip().split("=", 1) for part in header[6:].split(","))
        token, key = fields.get("t", ""), fields.get("k", "")
        try:
            head, claims, signature = token.split(".")
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(key))
            raw = b64d(signature)
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        except (ValueError, InvalidSignature):
            return "bad vapid signature"
        payload = json.loads(b64d(claims))
        if payload.get("aud") != self.origin:
            return f"wrong audience {payload.get('aud')}"
        if int(payload.get("exp", 0)) <= time.time():
            return "expired vapid token"
        self.vapid_keys.append(key)
        return None
