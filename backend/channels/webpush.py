"""Web Push to the dashboard installed as an app: VAPID keys, subscriptions, sending.

The VAPID key pair is generated once into the data dir (`vapid_private.pem`, 0600); the browser
gets only the public key. Each subscription (the browser's endpoint and its encryption keys) is
kept with the person who subscribed, in `webpush_subscriptions.json` (0600): their notifications
carry answer links made for them. An endpoint the push service says is gone (404, 410) is dropped.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from py_vapid import Vapid
from pydantic import BaseModel, Field, TypeAdapter, field_validator
from pywebpush import WebPushException, webpush_async

from backend.paths import private_dir, private_opener

log = logging.getLogger(__name__)

KEY_FILE = "vapid_private.pem"
SUBSCRIPTIONS_FILE = "webpush_subscriptions.json"
SUBJECT = "mailto:overseer@localhost"
"""The VAPID `sub` claim: push services want a contact; Overseer runs on someone's own machine."""
SEND_TIMEOUT = 15.0
GONE = (404, 410)


class SubscriptionKeys(BaseModel):
    p256dh: str = Field(min_length=1, max_length=200)
    auth: str = Field(min_length=1, max_length=100)


class WebPushSubscription(BaseModel):
    """What a browser's PushManager.subscribe() gives (its toJSON()), and whose it is."""

    endpoint: str = Field(max_length=2000)
    keys: SubscriptionKeys
    user: str = ""
    """The principal who subscribed (set by the server, never taken from the body)."""

    @field_validator("endpoint")
    @classmethod
    def _is_a_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise ValueError("a push endpoint is an https URL")
        return value


_LIST = TypeAdapter(list[WebPushSubscription])


class WebPush:
    """The host's VAPID identity and the subscriptions it pushes to."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock = threading.Lock()
        self.vapid = _load_or_create_key(data_dir / KEY_FILE)

    @property
    def public_key(self) -> str:
        """The application server key a browser subscribes with (base64url, uncompressed point)."""
        raw = self.vapid.public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def subscriptions(self) -> list[WebPushSubscription]:
        path = self.data_dir / SUBSCRIPTIONS_FILE
        try:
            return _LIST.validate_json(path.read_bytes())
        except FileNotFoundError:
            return []
        except ValueError:
            log.warning("webpush: %s is unreadable; no subscriptions", path)
            return []

    def subscribe(self, subscription: WebPushSubscription, user: str) -> None:
        """Keep `subscription` as `user`'s (a known endpoint is replaced, so re-subscribing is harmless)."""
        with self._lock:
            kept = [s for s in self.subscriptions() if s.endpoint != subscription.endpoint]
            self._write([*kept, subscription.model_copy(update={"user": user})])

    def unsubscribe(self, endpoint: str, user: str | None = None) -> bool:
        """Drop an endpoint (only `user`'s own, when given); True if one was dropped."""
        with self._lock:
            current = self.subscriptions()
            kept = [s for s in current if not (s.endpoint == endpoint and (user is None or s.user == user))]
            self._write(kept)
            return len(kept) != len(current)

    async def send(self, subscription: WebPushSubscription, payload: dict[str, Any]) -> bool:
        """Push `payload` (encrypted for the browser, signed with VAPID); False when the endpoint is gone."""
        try:
            await webpush_async(
                subscription.model_dump(include={"endpoint", "keys"}),
                data=json.dumps(payload),
                vapid_private_key=self.vapid,
                vapid_claims={"sub": SUBJECT},  # a fresh dict: pywebpush writes aud and exp into it
                timeout=SEND_TIMEOUT,
                ttl=600,
            )
        except WebPushException as exc:
            status = getattr(exc.response, "status", None) or getattr(exc.response, "status_code", None)
            if status in GONE:
                self.unsubscribe(subscription.endpoint)
                log.info("webpush: a subscription of %s is gone and was dropped", subscription.user)
                return False
            log.warning("webpush: a push to %s failed (status %s)", subscription.user, status)
        return True

    def _write(self, subscriptions: list[WebPushSubscription]) -> None:
        private_dir(self.data_dir)
        path = self.data_dir / SUBSCRIPTIONS_FILE
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb", opener=private_opener) as out:
            out.write(_LIST.dump_json(subscriptions))
        os.replace(tmp, path)


def _load_or_create_key(path: Path) -> Vapid:
    """The VAPID key at `path`, generated (0600, never overwritten) the first time."""
    if not path.exists():
        private_dir(path.parent)
        fresh = Vapid()
        fresh.generate_keys()
        try:
            with open(path, "xb", opener=private_opener) as out:  # x: a racing process's key wins
                out.write(fresh.private_pem())
        except FileExistsError:
            pass
    return Vapid.from_file(str(path))
