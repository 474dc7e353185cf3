"""Push notifications for waiting approvals: after `notify_after`, and a reminder before the timeout.

Each approval gets, per configured target, one notification once it has waited the target's
delay (a person at the dashboard who answers at once is never paged) and a reminder
`remind_before` its auto-deny. An approval answered meanwhile cancels what is still to come.
The delay is, most specific first: the target's `notify_after`, a `notify.policies` entry for
the tool or its server, the block's `notify_after`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx

from backend.app.services import AppServices, Subscription
from backend.channels.answer_links import AnswerLinks, LinkDecision
from backend.channels.approval_text import approval_text, tool_label, trimmed
from backend.channels.push_senders import PushFailed, PushMessage, send_apprise, send_ntfy
from backend.channels.webpush import WebPush, WebPushSubscription
from backend.config import NotifyConfig, PushTarget
from backend.domain.models import Approval, Event, utcnow

log = logging.getLogger(__name__)

BODY_LIMIT = 1000
SEND_TIMEOUT = 15.0
ACTIONS: tuple[tuple[str, LinkDecision], ...] = (("Allow once", "allow_once"), ("Deny", "deny"))


class PushNotifier:
    """Started and stopped with the host; see the module docstring."""

    def __init__(
        self,
        services: AppServices,
        config: NotifyConfig,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.services = services
        self.config = config
        self.clock = clock
        self.links = AnswerLinks(services.data_dir)
        settings = services.settings
        self.base_url = config.public_url or f"http://{settings.host}:{settings.port}"
        self.webpush = WebPush(services.data_dir) if config.webpush else None
        self._client: httpx.AsyncClient | None = None
        self._events: Subscription | None = None
        self._follow: asyncio.Task[None] | None = None
        self._timers: dict[str, asyncio.Task[None]] = {}

    async def start(self) -> None:
        self._client = httpx.AsyncClient(timeout=SEND_TIMEOUT)
        self._events = self.services.events.subscribe(None, types=["approval.requested", "approval.resolved"])
        self._follow = asyncio.create_task(self._follow_events(), name="push-events")

    async def aclose(self) -> None:
        if self._events is not None:
            self.services.events.unsubscribe(self._events)
        tasks = [t for t in (self._follow, *self._timers.values()) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._timers.clear()
        if self._client is not None:
            await self._client.aclose()

    def delay_for(self, approval: Approval, target: PushTarget | None = None) -> float:
        """Seconds an approval waits before `target` (None: a Web Push subscription) hears of it."""
        if target is not None and target.notify_after is not None:
            return target.notify_after
        name = approval.tool_name
        matching = [key for key in self.config.policies if name == key or name.startswith(key + "__")]
        if matching:
            return self.config.policies[max(matching, key=len)]
        return self.config.notify_after

    def recipients(self, approval: Approval) -> list[Recipient]:
        """Who hears of `approval`: each configured target, and each Web Push subscription."""
        found = [
            Recipient(key=f"target{index}", user=target.user, delay=self.delay_for(approval, target),
                      send=functools.partial(self._send_target, target))
            for index, target in enumerate(self.config.targets)
        ]
        if self.webpush is not None:
            for sub in self.webpush.subscriptions():
                digest = hashlib.sha256(sub.endpoint.encode()).hexdigest()[:12]
                found.append(Recipient(key=f"webpush-{digest}", user=sub.user, delay=self.delay_for(approval),
                                       send=functools.partial(self._send_webpush, sub)))
        return found

    async def _follow_events(self) -> None:
        assert self._events is not None
        for approval in await self.services.approvals.pending():  # those waiting from before a restart
            self._schedule(approval)
        async for event in self._events:
            self._on_event(event)

    def _on_event(self, event: Event) -> None:
        if event.type == "approval.requested":
            self._schedule(Approval.model_validate(event.data))
        elif event.type == "approval.resolved":
            for key in [k for k in self._timers if k.startswith(event.data["id"] + ":")]:
                self._timers.pop(key).cancel()

    def _schedule(self, approval: Approval) -> None:
        for recipient in self.recipients(approval):
            key = f"{approval.id}:{recipient.key}"
            if key not in self._timers:
                task = asyncio.create_task(self._deliver(approval, recipient), name=f"push-{key}")
                self._timers[key] = task
                task.add_done_callback(lambda done, key=key: self._forget(key, done))

    def _forget(self, key: str, done: asyncio.Task[None]) -> None:
        if self._timers.get(key) is done:
            del self._timers[key]

    async def _deliver(self, approval: Approval, recipient: Recipient) -> None:
        notify_at = approval.created_at + timedelta(seconds=recipient.delay)
        remind_at = approval.expires_at - timedelta(seconds=self.config.remind_before)
        if notify_at < remind_at or not self.config.remind_before:
            if await self._until(notify_at, approval.id):
                await self._send(approval, recipient, reminder=False)
        if self.config.remind_before:
            if await self._until(remind_at, approval.id):
                await self._send(approval, recipient, reminder=True)

    async def _until(self, when: datetime, approval_id: str) -> bool:
        """Wait until `when` (cancelled when the approval closes); True if it still waits then."""
        wait = (when - self.clock()).total_seconds()
        if wait > 0:
            await asyncio.sleep(wait)  # the notification's own schedule; an answer cancels this task
        return (await self.services.approvals.get(approval_id)).status == "pending"

    def message(self, approval: Approval, user: str, *, reminder: bool) -> PushMessage:
        """The notification for `user`, with answer links made for them."""
        left = max(0, int((approval.expires_at - self.clock()).total_seconds()))
        title = (
            f"Reminder: {tool_label(approval.tool_name)} is denied in {left} s unless you answer"
            if reminder
            else f"Approval waiting: {tool_label(approval.tool_name)}"
        )
        actions = (
            []
            if approval.kind == "elicitation"  # a question needs its form: the dashboard answers it
            else [(label, self.links.url(self.base_url, approval, d, user)) for label, d in ACTIONS]
        )
        review = actions[0][1] if actions else self.base_url
        return PushMessage(
            title=title, body=trimmed(approval_text(approval), BODY_LIMIT), review_url=review,
            actions=actions, reminder=reminder,
        )

    async def _send(self, approval: Approval, recipient: Recipient, *, reminder: bool) -> None:
        try:
            await recipient.send(self.message(approval, recipient.user, reminder=reminder))
        except PushFailed as exc:
            log.warning("push: approval %s not delivered: %s", approval.id, exc)
        except Exception:  # a plugin's own failure must not end the notifier
            log.exception("push: approval %s: sending to %s failed", approval.id, recipient.user)

    async def _send_target(self, target: PushTarget, message: PushMessage) -> None:
        if target.ntfy is not None:
            assert self._client is not None
            await send_ntfy(self._client, target, message)
        else:
            await send_apprise(target, message)

    async def _send_webpush(self, subscription: WebPushSubscription, message: PushMessage) -> None:
        assert self.webpush is not None
        payload = {
            "title": message.title,
            "body": message.body,
            "review": message.review_url,
            "reminder": message.reminder,
            # The service worker shows these as the notification's buttons and POSTs the link of the one tapped.
            "actions": [{"action": f"a{i}", "title": label, "url": url} for i, (label, url) in enumerate(message.actions)],
        }
        await self.webpush.send(subscription, payload)


@dataclass(frozen=True, kw_only=True)
class Recipient:
    """One place an approval is pushed to, when, and how."""

    key: str
    user: str
    delay: float
    send: Callable[[PushMessage], Awaitable[None]]
