"""Telegram's `/undo` (issue 32): restore the chat's session's workspace to before its last step.

`/undo` first shows what it would restore (the last step, and the files that differ from the
workspace now) with two buttons; only a press of "Undo it" rewinds, through the same door as the
dashboard and `overseer rewind` (`CheckpointService.rewind`), as the person who pressed it. The
button names the step it offered: if the session took another step meanwhile, the press restores
nothing and asks for a fresh `/undo`; a press refused (not the session's owner nor an admin, or the
session running a step) is told to the presser alone and leaves the offer as it is. The rewind is
itself checkpointed, so `/undo` again undoes it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from telegram import Bot, CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import TelegramError

from backend.app.checkpoints import CheckpointService, RewindResult, StepChanges
from backend.auth import Principal
from backend.channels.approval_text import trimmed
from backend.domain.errors import DomainError, NotFound

log = logging.getLogger(__name__)

UndoPress = Literal["undo", "keep"]
UNDO_CODES: dict[str, UndoPress] = {"u": "undo", "k": "keep"}
"""The callback data is `<code>:<session id>:<step>`: at most 55 bytes, under Telegram's 64."""
MAX_LISTED = 20
"""Files named in an offer or an outcome; the rest are counted."""


def undo_keyboard(session_id: str, step: int) -> InlineKeyboardMarkup:
    """"Undo it" / "Keep it", both naming the step offered."""
    return InlineKeyboardMarkup(
        [[
            InlineKeyboardButton("Undo it", callback_data=f"u:{session_id}:{step}"),
            InlineKeyboardButton("Keep it", callback_data=f"k:{session_id}:{step}"),
        ]]
    )  # fmt: skip


def parse_undo(data: str | None) -> tuple[UndoPress, str, int] | None:
    """(what was pressed, the session id, the step) from an undo button's data; None for any other."""
    code, _, rest = (data or "").partition(":")
    session_id, _, step = rest.rpartition(":")
    if code not in UNDO_CODES or not session_id or not step.isdigit():
        return None
    return UNDO_CODES[code], session_id, int(step)


def listed(paths: list[str]) -> str:
    """Paths one a line, at most MAX_LISTED, then how many more."""
    lines = [f"  {p}" for p in paths[:MAX_LISTED]]
    if len(paths) > MAX_LISTED:
        lines.append(f"  and {len(paths) - MAX_LISTED} more")
    return "\n".join(lines)


def step_name(step: int, tool: str | None) -> str:
    """"step 3 (mcp__file__write_file)", or "step 4 (a rewind)"."""
    return f"step {step} ({tool or 'a rewind'})"


def offer_text(step: StepChanges) -> str:
    """What `/undo` would do, asked before it does it."""
    paths = [f.path for f in step.files]
    return (
        f"Undo {step_name(step.step, step.tool_name)}? This restores the workspace as it was before it; "
        f"{len(paths)} file(s) differ now:\n{listed(paths)}"
    )


def outcome_text(result: RewindResult) -> str:
    """What a rewind did, and how to take it back."""
    where = f"before {step_name(result.step, result.tool_name)}"
    done = (
        f"Restored the workspace to {where}:\n{listed(result.restored)}"
        if result.restored
        else f"Nothing needed restoring: the workspace was already as it was {where}."
    )
    return f"{done}\n/undo again takes this back."


@dataclass(kw_only=True)
class UndoOffers:
    """Offers `/undo` with a confirmation, and carries it out when confirmed."""

    bot: Bot
    checkpoints: CheckpointService
    people: dict[int, Principal]
    """Telegram user id -> who acts through it."""

    @staticmethod
    def owns(data: str | None) -> bool:
        """True for the data of an undo button (the approval cards own the others)."""
        return parse_undo(data) is not None

    async def offer(self, chat: int, session_id: str | None) -> str | None:
        """Send the confirmation for undoing the session's last step; else what to say instead."""
        if session_id is None:
            return "Nothing to undo: this chat has no session yet."
        try:
            step = await self.checkpoints.preview(session_id)
        except NotFound:
            return "Nothing to undo: no step of this session changed the workspace."
        if not step.files:
            return (
                f"Nothing to undo: the workspace is as it was before {step_name(step.step, step.tool_name)}."
            )
        await self.bot.send_message(
            chat, trimmed(offer_text(step), 4096), reply_markup=undo_keyboard(session_id, step.step)
        )
        return None

    async def press(self, query: CallbackQuery) -> None:
        """A press of an offer's button: rewind as the presser (after checking the step is still the
        last), or keep; the offer is edited to say what came of it."""
        parsed = parse_undo(query.data)
        principal = self.people.get(query.from_user.id)
        if principal is None:
            log.warning("telegram: refused an undo press from unknown user %s", query.from_user.id)
            await self._toast(query, "Sorry, you are not on this bot's list of people.")
            return
        if parsed is None:
            await self._toast(query, "This button is not one of Overseer's.")
            return
        press, session_id, step = parsed
        if press == "keep":
            await self._toast(query, "Kept as it is.")
            await self._edit(query, "Kept as it is: nothing was undone.")
            return
        try:
            last = await self.checkpoints.preview(session_id)
            if last.step != step:
                text = "The session has taken another step since; nothing was undone. Send /undo again."
            else:
                result = await self.checkpoints.rewind(session_id, step=step, by=principal, via="channel")
                text = outcome_text(result)
        except DomainError as exc:
            # Not theirs, or running a step: told to the presser alone; the offer stays for others, or later.
            await self._toast(query, f"Nothing was undone: {exc}")
            return
        await self._toast(query, text.splitlines()[0])
        await self._edit(query, text)

    async def _toast(self, query: CallbackQuery, text: str) -> None:
        try:
            await query.answer(trimmed(text, 200))
        except TelegramError as exc:
            log.warning("telegram: answering an undo press failed: %s", type(exc).__name__)

    async def _edit(self, query: CallbackQuery, text: str) -> None:
        message = query.message
        if message is None:
            return
        try:
            await self.bot.edit_message_text(
                trimmed(text, 4096), chat_id=message.chat.id, message_id=message.message_id
            )
        except TelegramError as exc:
            log.warning("telegram: editing an undo offer failed: %s", type(exc).__name__)
