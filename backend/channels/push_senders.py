"""Where a push goes: an ntfy topic (with one-tap action buttons) or any apprise URL.

ntfy gets the approval with `http` actions that POST the answer links (one tap answers, as the
person the links were made for) and a click that opens the confirmation page. Apprise reaches
the long tail (Slack, Discord, Matrix, mail, webhooks) with the links written out in the text:
plain links are opened with GET, which only shows the confirmation page.
A target's URL often holds a key, so errors name the target's person, never its URL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from backend.config import PushTarget


class PushFailed(Exception):
    """A push could not be delivered; the message names the target's person and the cause's kind."""


@dataclass(kw_only=True)
class PushMessage:
    """One notification: what waits, and the links that answer it."""

    title: str
    body: str
    review_url: str
    """The confirmation page (GET): where a tap on the notification leads."""
    actions: list[tuple[str, str]] = field(default_factory=list)
    """(label, answer link) pairs: POSTed by ntfy's buttons, opened (GET) from other apps."""
    reminder: bool = False


def split_topic(url: str) -> tuple[str, str]:
    """`https://ntfy.example/topic` as (`https://ntfy.example`, `topic`)."""
    parts = urlsplit(url)
    base_path, _, topic = parts.path.rstrip("/").rpartition("/")
    if not topic:
        raise ValueError("an ntfy URL ends with its topic: https://ntfy.sh/my-topic")
    return f"{parts.scheme}://{parts.netloc}{base_path}", topic


async def send_ntfy(client: httpx.AsyncClient, target: PushTarget, message: PushMessage) -> None:
    """Publish as JSON to the ntfy server (ntfy's own format for actions)."""
    assert target.ntfy is not None
    base, topic = split_topic(target.ntfy)
    payload = {
        "topic": topic,
        "title": message.title,
        "message": message.body,
        "click": message.review_url,
        "priority": 5 if message.reminder else 4,
        "tags": ["warning" if message.reminder else "question"],
        "actions": [
            {"action": "http", "label": label, "url": url, "method": "POST", "clear": True}
            for label, url in message.actions
        ],
    }
    headers = {"Authorization": f"Bearer {target.ntfy_token.get_secret_value()}"} if target.ntfy_token else {}
    try:
        response = await client.post(f"{base}/", json=payload, headers=headers)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise PushFailed(f"ntfy for {target.user}: {type(exc).__name__}") from None


async def send_apprise(target: PushTarget, message: PushMessage) -> None:
    """Notify through one apprise URL, the links written out."""
    import apprise  # loaded only when an apprise target is configured (it imports many plugins)

    assert target.apprise is not None
    notifier = apprise.Apprise()
    if not notifier.add(target.apprise.get_secret_value()):
        raise PushFailed(f"apprise for {target.user}: the URL is not one apprise knows")
    links = "\n".join(f"{label}: {url}" for label, url in message.actions)
    body = f"{message.body}\n\n{links}\nReview: {message.review_url}"
    if not await notifier.async_notify(body=body, title=message.title):
        raise PushFailed(f"apprise for {target.user}: not delivered")
