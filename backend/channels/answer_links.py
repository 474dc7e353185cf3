"""Answer links: a URL in a notification that answers one approval one way, as one person.

A link carries its approval, its decision, the person it was made for and its expiry (the
approval's), signed with HMAC-SHA256 under a key kept in the data dir (0600). Opening it (GET)
only shows a confirmation page: mail and chat apps open links to preview them. A POST decides,
through the approval door, as the person the link was made for. A link is single-use because it
answers its approval, which closes once: any later use finds it closed and says who answered.
Tampering with any byte breaks the signature; the key never leaves the data dir.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from backend.auth_store import read_or_create_secret
from backend.domain.errors import Conflict, Forbidden
from backend.domain.models import Approval

KEY_FILE = "answer_link_key"
LinkDecision = Literal["allow_once", "allow_session", "deny"]
LINK_DECISIONS: tuple[LinkDecision, ...] = ("allow_once", "allow_session", "deny")


class LinkInvalid(Forbidden):
    """The link was not made by this Overseer, or was changed (403)."""


class LinkExpired(Conflict):
    """The link's approval timed out: its state no longer allows an answer (its route says 410 Gone)."""


@dataclass(frozen=True, kw_only=True)
class AnswerLink:
    """What a valid link says."""

    approval_id: str
    decision: LinkDecision
    user: str
    expires: datetime


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class AnswerLinks:
    """Makes and checks answer links under this host's key."""

    def __init__(self, data_dir: Path) -> None:
        self._key = read_or_create_secret(data_dir / KEY_FILE).encode("utf-8")

    def token(self, approval: Approval, decision: LinkDecision, user: str) -> str:
        """The signed token of a link (the URL's last segment)."""
        payload = {
            "a": approval.id,
            "d": decision,
            "u": user,
            "e": int(approval.expires_at.timestamp()),
            "n": secrets.token_hex(4),  # two links for the same answer still differ
        }
        body = _b64(json.dumps(payload, separators=(",", ":")).encode("utf-8"))
        return f"{body}.{self._sign(body)}"

    def url(self, base: str, approval: Approval, decision: LinkDecision, user: str) -> str:
        return f"{base.rstrip('/')}/answer/{self.token(approval, decision, user)}"

    def check(self, token: str, *, now: datetime | None = None) -> AnswerLink:
        """The link's content; LinkInvalid when it is not ours or was changed, LinkExpired after its time."""
        body, _, signature = token.partition(".")
        if not body or not hmac.compare_digest(signature.encode("ascii", "replace"), self._sign(body).encode("ascii")):
            raise LinkInvalid("this link is not valid: it was not made by this Overseer, or it was changed")
        try:
            payload = json.loads(_unb64(body))
            link = AnswerLink(
                approval_id=str(payload["a"]),
                decision=payload["d"],
                user=str(payload["u"]),
                expires=datetime.fromtimestamp(int(payload["e"]), UTC),
            )
        except (ValueError, KeyError, TypeError) as exc:  # signed by us, so this is a bug, not an attack
            raise LinkInvalid("this link cannot be read") from exc
        if link.decision not in LINK_DECISIONS:
            raise LinkInvalid("this link cannot be read")
        if (now or datetime.now(UTC)) >= link.expires:
            raise LinkExpired("this link has expired: the approval timed out")
        return link

    def _sign(self, body: str) -> str:
        return _b64(hmac.new(self._key, body.encode("ascii", "replace"), hashlib.sha256).digest())
