"""The agent's answer in a Telegram chat: one message, edited as the answer streams in.

Telegram refuses edits that come too fast (about one a second per chat), so token deltas are
gathered and the message is edited at most once per `interval`; the complete answer always
gets a final edit. A `RetryAfter` from Telegram is waited out once, then that edit is dropped
(the next one carries the whole text anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from telegram import Bot
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import RetryAfter, TelegramError

from backend.channels.approval_text import trimmed

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 4096
RETRY_AFTER_LIMIT = 30.0
"""Longest wait a RetryAfter is honoured with; past it the edit is dropped."""


def pieces(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """`text` in parts Telegram takes, cut at a line break where one is near the limit."""
    parts: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", limit // 2, limit)
        cut = cut if cut > 0 else limit
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n")
    return [*parts, text] if text else parts


@dataclass(kw_only=True)
class Reply:
    """One answer being streamed into one message."""

    chat_id: int
    text: str = ""
    message_id: int | None = None
    shown: str = ""
    last_edit: float = float("-inf")
    flush: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(kw_only=True)
class ReplyStreams:
    """The replies being written, one per session that talks in a chat."""

    bot: Bot
    interval: float
    clock: Callable[[], float] = time.monotonic
    replies: dict[str, Reply] = field(default_factory=dict)

    async def token(self, session_id: str, chat_id: int, text: str) -> None:
        """A delta of the answer: shown at once if the last edit is old enough, else soon."""
        reply = self.replies.setdefault(session_id, Reply(chat_id=chat_id))
        reply.text += text
        wait = reply.last_edit + self.interval - self.clock()
        if wait <= 0 and reply.flush is None:
            await self._show(reply)
        elif reply.flush is None:
            reply.flush = asyncio.create_task(self._later(reply, max(wait, 0)), name="telegram-reply-edit")

    async def finish(self, session_id: str, chat_id: int, text: str) -> None:
        """The complete answer: its final edit (or its message, when nothing streamed), then a new reply."""
        reply = self.replies.pop(session_id, None) or Reply(chat_id=chat_id)
        if reply.flush is not None:
            reply.flush.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reply.flush
        # Past Telegram's limit, the streamed message ends with the first part and the rest follows.
        first, *rest = pieces(text) or [""]
        reply.text = first
        if first.strip():
            await self._show(reply)
        for piece in rest:
            await self.say(chat_id, piece)

    async def say(self, chat_id: int, text: str) -> None:
        """A message of Overseer's own (a command's answer, an error)."""
        try:
            await self.bot.send_message(chat_id, trimmed(text, MESSAGE_LIMIT))
        except TelegramError as exc:
            log.warning("telegram: a message to chat %s was not sent: %s", chat_id, type(exc).__name__)

    async def aclose(self) -> None:
        for reply in self.replies.values():
            if reply.flush is not None:
                reply.flush.cancel()
        self.replies.clear()

    async def _later(self, reply: Reply, wait: float) -> None:
        await asyncio.sleep(wait)  # production pacing, not a test wait: Telegram's edit rate
        reply.flush = None
        await self._show(reply)

    async def _show(self, reply: Reply) -> None:
        async with reply.lock:
            text = trimmed(reply.text, MESSAGE_LIMIT)
            if not text.strip() or text == reply.shown:
                return
            reply.last_edit = self.clock()
            for attempt in range(2):
                try:
                    if reply.message_id is None:
                        sent = await self.bot.send_message(reply.chat_id, text)
                        reply.message_id = sent.message_id
                    else:
                        await self.bot.edit_message_text(text, chat_id=reply.chat_id, message_id=reply.message_id)
                    reply.shown = text
                    return
                except RetryAfter as exc:
                    after = exc.retry_after  # seconds, or a timedelta in newer PTB settings
                    wait = after.total_seconds() if hasattr(after, "total_seconds") else float(after)
                    if attempt or wait > RETRY_AFTER_LIMIT:
                        return
                    await asyncio.sleep(wait)  # Telegram asked for this pause
                except TelegramBadRequest as exc:  # "message is not modified" and the like
                    log.info("telegram: reply not edited: %s", exc.message)
                    return
                except TelegramError as exc:
                    log.warning("telegram: reply to chat %s failed: %s", reply.chat_id, type(exc).__name__)
                    return
