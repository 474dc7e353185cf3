"""The Telegram channel: a bot people talk to, and where approvals find them.

Long polling (getUpdates) on a maintained library (python-telegram-bot's `Bot`), against
`telegram.api_base` (Telegram's, or a local server in tests). Two loops: one reads updates
(messages to the inbox, button presses to the cards), one follows the event bus (approval
cards out, outcomes edited in, the answers of Telegram sessions streamed into their chats).
The bot token never reaches a log line: httpx logs each request's URL, which carries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from pathlib import Path

from telegram import Bot, Update
from telegram.error import Forbidden as TelegramForbidden
from telegram.error import InvalidToken, TelegramError
from telegram.request import HTTPXRequest

from backend.app.services import AppServices, Subscription
from backend.channels.principals import principal_named
from backend.channels.telegram_cards import ApprovalCards
from backend.channels.telegram_inbox import Inbox
from backend.channels.telegram_replies import ReplyStreams
from backend.channels.telegram_state import TelegramState
from backend.channels.telegram_undo import UndoOffers
from backend.config import TelegramConfig
from backend.domain.models import Approval, Event, EventType

log = logging.getLogger(__name__)

BACKOFF_START, BACKOFF_LIMIT = 1.0, 60.0
"""Seconds between attempts while Telegram cannot be reached, doubling up to the limit."""
CLOSE_GRACE = 5.0
"""Seconds a stop waits for the updates and events being handled."""
FOLLOWED: list[EventType] = ["approval.requested", "approval.resolved", "token", "message", "session.status"]
"""The events the bot acts on; the rest (every tool call's) it is not woken for."""
_TOKEN_IN_URL = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")


class _TokenFilter(logging.Filter):
    """Strips `/bot<token>` from log lines (httpx logs every request's URL at INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _TOKEN_IN_URL.sub("/bot[redacted]", message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


TOKEN_FILTER = _TokenFilter()
# A logger's filter does not cover its children, so each logger that sees URLs is named.
for _name in ("httpx", "httpcore", "telegram", "telegram.Bot", "telegram.BaseRequest", "telegram.HTTPXRequest"):
    logging.getLogger(_name).addFilter(TOKEN_FILTER)


def make_bot(config: TelegramConfig) -> Bot:
    """A Bot for `config.api_base`, with a long-polling request that outlasts the poll timeout."""
    base = config.api_base.rstrip("/")
    return Bot(
        config.bot_token.get_secret_value(),
        base_url=f"{base}/bot",
        base_file_url=f"{base}/file/bot",
        request=HTTPXRequest(connection_pool_size=8),
        get_updates_request=HTTPXRequest(connection_pool_size=1, read_timeout=config.poll_timeout + 10.0),
    )


class TelegramChannel:
    """Started and stopped with the host; see the module docstring."""

    def __init__(
        self, services: AppServices, config: TelegramConfig, *, state_path: Path | None = None
    ) -> None:
        self.services = services
        self.config = config
        self.state_path = state_path or services.data_dir / "telegram" / "state.json"
        self.state = TelegramState.load(self.state_path)
        self.people = {uid: principal_named(services.settings, name) for uid, name in config.users.items()}
        by_name = {p.name: uid for uid, p in self.people.items()}
        self.bot = make_bot(config)
        self.replies = ReplyStreams(bot=self.bot, interval=config.edit_interval)
        self.cards = ApprovalCards(
            bot=self.bot,
            sessions=services.sessions,
            approvals=services.approvals,
            state=self.state,
            save=self.save,
            people=self.people,
            notify_chats=[by_name[name] for name in config.notify if name in by_name],
        )
        self.undo = UndoOffers(bot=self.bot, checkpoints=services.checkpoints, people=self.people)
        self.inbox = Inbox(
            services=services,
            state=self.state,
            save=self.save,
            people=self.people,
            cards=self.cards,
            replies=self.replies,
            undo=self.undo,
        )
        self._events: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._handling: asyncio.Task[None] | None = None
        self.polling = asyncio.Event()
        """Set once the first getUpdates went out (tests wait on it)."""

    def save(self) -> None:
        self.state.save(self.state_path)

    async def start(self) -> None:
        # Subscribed before looking at what is pending, so no approval falls between the two.
        self._events = self.services.events.subscribe(None, types=FOLLOWED)
        self._tasks = [
            asyncio.create_task(self._follow_events(), name="telegram-events"),
            asyncio.create_task(self._poll(), name="telegram-poll"),
        ]

    async def aclose(self) -> None:
        # What is under way finishes (a card half sent would be sent again, unedited, after a
        # restart), bounded; the long poll, which may wait for minutes, is cancelled at once.
        if self._events is not None:
            self.services.events.unsubscribe(self._events)  # its feed ends after the events already queued
        if self._tasks:
            follow, poll = self._tasks
            poll.cancel()
            tasks = [t for t in (self._handling, follow, poll) if t is not None]
            await asyncio.wait(tasks, timeout=CLOSE_GRACE)
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
        await self.replies.aclose()
        with contextlib.suppress(TelegramError, RuntimeError):
            await self.bot.shutdown()
        self.save()

    async def _poll(self) -> None:
        backoff, initialized = BACKOFF_START, False
        while True:
            try:
                if not initialized:
                    await self.bot.initialize()  # getMe: is the token good?
                    initialized = True
                self.polling.set()
                updates = await self.bot.get_updates(
                    offset=self.state.offset,
                    timeout=self.config.poll_timeout,
                    allowed_updates=["message", "callback_query"],
                )
                backoff = BACKOFF_START
            except (InvalidToken, TelegramForbidden):
                log.error("telegram: the bot token was refused; the Telegram channel is off until a restart")
                return
            except TelegramError as exc:
                log.warning("telegram: getUpdates failed (%s); trying again in %.0f s", type(exc).__name__, backoff)
                await asyncio.sleep(backoff)  # a bounded backoff while Telegram is unreachable
                backoff = min(backoff * 2, BACKOFF_LIMIT)
                continue
            if updates:
                self._handling = asyncio.create_task(self._handle_all(updates), name="telegram-updates")
                await asyncio.shield(self._handling)  # a stop waits for it (bounded), see aclose

    async def _handle_all(self, updates: tuple[Update, ...]) -> None:
        for update in updates:
            self.state.offset = update.update_id + 1
            await self._handle(update)
        self.save()

    async def _handle(self, update: Update) -> None:
        try:
            if update.callback_query is not None and self.undo.owns(update.callback_query.data):
                await self.undo.press(update.callback_query)
            elif update.callback_query is not None:
                await self.cards.press(update.callback_query)
            elif update.message is not None:
                await self.inbox.handle(update.message)
        except Exception:  # one bad update must not stop the bot
            log.exception("telegram: handling update %s failed", update.update_id)

    async def _follow_events(self) -> None:
        assert self._events is not None
        try:
            await self._catch_up()
        except Exception:
            log.exception("telegram: catching up on pending approvals failed")
        async for event in self._events:
            try:
                await self._on_event(event)
            except Exception:
                log.exception("telegram: handling a %s event failed", event.type)

    async def _catch_up(self) -> None:
        """After a start: cards for approvals that wait without one, outcomes for those closed meanwhile."""
        for approval_id in list(self.state.cards):
            await self.cards.settle(approval_id)
        for approval in await self.services.approvals.pending():
            await self.cards.send(approval)

    async def _on_event(self, event: Event) -> None:  # of the FOLLOWED types
        if event.type == "approval.requested":
            await self.cards.send(Approval.model_validate(event.data))
        elif event.type == "approval.resolved":
            await self.cards.settle(event.data["id"])
        chat = self.state.chat_of(event.session_id)
        if chat is None:
            return
        if event.type == "token":
            await self.replies.token(event.session_id, chat, event.data.get("text", ""))
        elif event.type == "message" and event.data.get("role") == "assistant":
            await self.replies.finish(event.session_id, chat, event.data.get("content", ""))
        elif event.type == "session.status" and event.data.get("status") == "error":
            await self.replies.say(chat, f"The run failed: {event.data.get('error') or 'unknown error'}")
