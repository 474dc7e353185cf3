"""Approvals in Telegram: a card with inline buttons, a press answered through the approval door.

A card goes to the chat whose session asks, or, for sessions begun elsewhere, to the private
chats of the people in `telegram.notify`. A press answers as the person who pressed it
(`ApprovalService.answer(..., via="channel")`); a press on a closed approval changes nothing and
says who answered. However an approval closes (here, on the dashboard, by a timeout, after a
restart), every card of it is edited to show the outcome.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from telegram import Bot, CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import NetworkError as TelegramNetworkError
from telegram.error import TelegramError

from backend.app.approvals import ApprovalService
from backend.app.sessions import SessionService
from backend.auth import Principal
from backend.channels.approval_text import approval_text, outcome_text, trimmed
from backend.channels.telegram_state import Card, TelegramState
from backend.domain.errors import ApprovalClosed, ApprovalNotFound, Forbidden, Invalid, NotFound
from backend.domain.models import Approval, Decision

log = logging.getLogger(__name__)

Press = Literal["once", "session", "deny", "reason"]
PRESS_CODES: dict[str, Press] = {"o": "once", "s": "session", "d": "deny", "r": "reason"}
"""The callback data is `<code>:<approval id>`: 34 bytes, well under Telegram's 64."""
REASON_PROMPT = "Why deny it? Your next message here is the reason the agent reads."
SEND_ATTEMPTS, SEND_BACKOFF = 3, 0.5
"""A toast or a card's edit lost to a dropped connection is sent again, 0.5 s then 1 s later: both
are safe to repeat (issue 31, item 12). A new card is not: a lost response may hide a sent one."""
T = TypeVar("T")


async def retrying(send: Callable[[], Awaitable[T]]) -> T:
    """`send()`, again on a network failure (a dropped connection, a timeout), never on Telegram's
    refusal (BadRequest, which python-telegram-bot derives from NetworkError): bounded, with backoff."""
    for attempt in range(1, SEND_ATTEMPTS + 1):
        try:
            return await send()
        except TelegramBadRequest:
            raise
        except TelegramNetworkError as exc:
            if attempt == SEND_ATTEMPTS:
                raise
            log.info("telegram: %s; sending again (attempt %d of %d)", type(exc).__name__, attempt + 1, SEND_ATTEMPTS)
            await asyncio.sleep(SEND_BACKOFF * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def keyboard(approval: Approval) -> InlineKeyboardMarkup:
    """Allow once / for the session (tool calls and network hosts) / Deny / Deny with a reason."""
    allow = [InlineKeyboardButton("Allow once", callback_data=f"o:{approval.id}")]
    if approval.kind in ("tool", "network"):
        allow.append(InlineKeyboardButton("Allow for session", callback_data=f"s:{approval.id}"))
    deny = [
        InlineKeyboardButton("Deny", callback_data=f"d:{approval.id}"),
        InlineKeyboardButton("Deny with reason", callback_data=f"r:{approval.id}"),
    ]
    return InlineKeyboardMarkup([allow, deny])


def parse_press(data: str | None) -> tuple[Press, str] | None:
    """(what was pressed, the approval id) from a button's callback data; None for anything else."""
    code, _, approval_id = (data or "").partition(":")
    if code not in PRESS_CODES or not approval_id:
        return None
    return PRESS_CODES[code], approval_id


@dataclass(kw_only=True)
class ApprovalCards:
    """Sends, answers and settles approval cards."""

    bot: Bot
    sessions: SessionService
    approvals: ApprovalService
    state: TelegramState
    save: Callable[[], None]
    people: dict[int, Principal]
    """Telegram user id -> who acts through it."""
    notify_chats: list[int]
    """Private chats that get the approvals of sessions not started in Telegram."""

    async def chats_for(self, approval: Approval) -> list[int]:
        """The chat of the Telegram session asking (or of its nearest ancestor), else the notify chats."""
        session_id: str | None = approval.session_id
        seen: set[str] = set()
        while session_id and session_id not in seen:
            chat = self.state.chat_of(session_id)
            if chat is not None:
                return [chat]
            seen.add(session_id)
            try:
                session_id = (await self.sessions.get(session_id)).parent_id
            except NotFound:
                break
        return list(self.notify_chats)

    async def send(self, approval: Approval) -> None:
        """Send the approval's card wherever it belongs (once: a card already sent is not repeated)."""
        if approval.id in self.state.cards:
            return
        title = await self._title(approval.session_id)
        cards: list[Card] = []
        for chat in await self.chats_for(approval):
            try:
                sent = await self.bot.send_message(
                    chat, approval_text(approval, title=title), reply_markup=keyboard(approval)
                )
            except TelegramError as exc:
                log.warning("telegram: the approval card for chat %s was not sent: %s", chat, type(exc).__name__)
                continue
            cards.append(Card(chat_id=chat, message_id=sent.message_id))
        if cards:
            self.state.cards[approval.id] = cards
            self.save()

    async def settle(self, approval_id: str) -> None:
        """Edit every card of a closed approval to show its outcome, and forget the cards."""
        cards = self.state.cards.get(approval_id)
        if not cards:
            return
        try:
            approval = await self.approvals.get(approval_id)
        except ApprovalNotFound:
            approval = None
        if approval is not None and approval.status == "pending":
            return
        title = await self._title(approval.session_id) if approval else None
        text = (
            f"{approval_text(approval, title=title)}\n\n{outcome_text(approval)}"
            if approval
            else "This approval no longer exists."
        )
        for card in cards:
            await self._edit(card, trimmed(text, 4096))
        self.state.cards.pop(approval_id, None)
        for key, waiting in list(self.state.reasons.items()):
            if waiting == approval_id:
                del self.state.reasons[key]
        self.save()

    async def press(self, query: CallbackQuery) -> None:
        """A button was pressed: answer as the presser, or say why not (and who answered already)."""
        parsed = parse_press(query.data)
        principal = self.people.get(query.from_user.id)
        if principal is None:
            log.warning("telegram: refused a button press from unknown user %s", query.from_user.id)
            await self._toast(query, "Sorry, you are not on this bot's list of people.")
            return
        if parsed is None:
            await self._toast(query, "This button is not one of Overseer's.")
            return
        press, approval_id = parsed
        if press == "reason":
            chat = query.message.chat.id if query.message else query.from_user.id
            if await self._closed_already(query, approval_id):
                return
            self.state.reasons[f"{chat}:{query.from_user.id}"] = approval_id
            self.save()
            await self._toast(query, "Send the reason as your next message.")
            await self.bot.send_message(chat, REASON_PROMPT)
            return
        kind = {"once": "allow_once", "session": "allow_session", "deny": "deny"}[press]
        await self._answer(query, approval_id, Decision(kind=kind), principal)

    def reason_pending(self, chat: int, user: int) -> str | None:
        """The approval this user's next message in this chat is the deny reason of."""
        return self.state.reasons.get(f"{chat}:{user}")

    async def deny_with_reason(self, chat: int, user: int, reason: str) -> str:
        """Deny the waiting approval with `reason`; what to tell the person."""
        approval_id = self.state.reasons.pop(f"{chat}:{user}")
        self.save()
        principal = self.people[user]
        try:
            await self.approvals.answer(
                approval_id, Decision(kind="deny", message=reason), by=principal, via="channel"
            )
        except ApprovalClosed:
            return await self._who_answered(approval_id)
        except ApprovalNotFound:
            return "That approval no longer exists."
        except (Forbidden, Invalid) as exc:
            return str(exc)
        return "Denied, with your reason."

    async def _answer(self, query: CallbackQuery, approval_id: str, decision: Decision, by: Principal) -> None:
        try:
            closed = await self.approvals.answer(approval_id, decision, by=by, via="channel")
        except ApprovalClosed:
            await self._toast(query, await self._who_answered(approval_id))
            await self.settle(approval_id)
            return
        except ApprovalNotFound:
            await self._toast(query, "That approval no longer exists.")
            return
        except (Forbidden, Invalid) as exc:  # a viewer's press, a decision this approval cannot take
            await self._toast(query, str(exc))
            return
        await self._toast(query, outcome_text(closed))

    async def _closed_already(self, query: CallbackQuery, approval_id: str) -> bool:
        try:
            approval = await self.approvals.get(approval_id)
        except ApprovalNotFound:
            await self._toast(query, "That approval no longer exists.")
            return True
        if approval.status == "pending":
            return False
        await self._toast(query, await self._who_answered(approval_id))
        await self.settle(approval_id)
        return True

    async def _who_answered(self, approval_id: str) -> str:
        approval = await self.approvals.get(approval_id)
        return f"Already answered. {outcome_text(approval)}"

    async def _title(self, session_id: str) -> str | None:
        try:
            return (await self.sessions.get(session_id)).title
        except NotFound:
            return None

    async def _toast(self, query: CallbackQuery, text: str) -> None:
        try:
            await retrying(lambda: query.answer(trimmed(text, 200)))  # Telegram shows at most 200 characters
        except TelegramError as exc:
            log.warning("telegram: answering a button press failed: %s", type(exc).__name__)

    async def _edit(self, card: Card, text: str) -> None:
        try:
            await retrying(lambda: self.bot.edit_message_text(text, chat_id=card.chat_id, message_id=card.message_id))
        except TelegramBadRequest as exc:  # "message is not modified", or deleted by the person
            log.info("telegram: card %s in chat %s not edited: %s", card.message_id, card.chat_id, exc.message)
        except TelegramError as exc:
            log.warning("telegram: editing card %s failed: %s", card.message_id, type(exc).__name__)
