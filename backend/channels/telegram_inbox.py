"""Messages people send the bot: commands, conversation, photos and documents.

A listed person's message continues the chat's current session or starts one (origin
`telegram`); `/new` starts another, `/mode NAME` switches modes, `/stop` stops the run, `/undo`
restores the workspace to before the last step (after a confirmation), `/help` lists commands,
modes and skills; a leading `/skill-name` attaches a skill as on the dashboard.
Photos and documents are saved in the session's workspace (under `telegram/`) and attached.
Anyone else gets one polite refusal, and the attempt is logged.
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from telegram import Message
from telegram.error import TelegramError

from backend.app.chat import ChatInput, ImageInput
from backend.app.services import AppServices
from backend.app.sessions import title_of
from backend.auth import Principal
from backend.channels.telegram_cards import ApprovalCards
from backend.channels.telegram_replies import ReplyStreams
from backend.channels.telegram_state import TelegramState
from backend.channels.telegram_undo import UndoOffers
from backend.domain.errors import BadRequest, DomainError, NotFound
from backend.domain.session_options import SessionOptions

log = logging.getLogger(__name__)

REFUSAL = (
    "Sorry, I only work for the people my owner listed. If that should include you, "
    "ask them to add your Telegram id ({id}) to Overseer's telegram.users."
)
UPLOADS = "telegram"
"""The workspace folder photos and documents are saved in."""
MAX_FILE_BYTES = 20 * 2**20  # the Bot API's own limit for getFile downloads
TEXT_TYPES = ("text/", "application/json", "application/x-yaml", "application/xml")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def help_text(modes: list[str], skills: list[str]) -> str:
    """The commands, the modes and (for a workspace that has any) the skills."""
    lines = [
        "Write to me and I work on it in this chat's session.",
        "/new: start a new session",
        "/mode NAME: switch modes (for a new session: the mode it starts in)",
        "/agent NAME: start a new session with that agent (/agent lists them)",
        "/stop: stop the current run",
        "/undo: restore the workspace to before the last step (asks first)",
        "/help: this list",
        "Modes: " + ", ".join(modes),
    ]
    if skills:
        lines.append("Skills (start a message with /name): " + ", ".join("/" + name for name in skills))
    return "\n".join(lines)


def safe_name(name: str | None, fallback: str) -> str:
    """A file name that stays in its folder: no path, no odd characters, never empty."""
    cleaned = _UNSAFE.sub("_", Path(name or "").name).strip("._")
    return cleaned[:100] or fallback


@dataclass(kw_only=True)
class Inbox:
    """Handles one incoming message at a time."""

    services: AppServices
    state: TelegramState
    save: Callable[[], None]
    people: dict[int, Principal]
    cards: ApprovalCards
    replies: ReplyStreams
    undo: UndoOffers

    async def handle(self, message: Message) -> None:
        user = message.from_user
        chat = message.chat.id
        if user is None or user.id not in self.people:
            log.warning("telegram: refused a message from unknown user %s", user.id if user else "(none)")
            await self.replies.say(chat, REFUSAL.format(id=user.id if user else "?"))
            return
        principal = self.people[user.id]
        text = (message.text or message.caption or "").strip()
        if self.cards.reason_pending(chat, user.id) is not None and text:
            await self.replies.say(chat, await self.cards.deny_with_reason(chat, user.id, text))
            return
        if not principal.can("approver"):
            await self.replies.say(chat, f"You are a {principal.role} here: you can watch, but not start work.")
            return
        command, _, argument = text.partition(" ")
        try:
            if command in ("/start", "/help"):
                workspace = await self._workspace(chat)
                modes = [m.name for m in self.services.modes.list()]
                skills = [s.name for s in self.services.skills.list(workspace)]
                await self.replies.say(chat, help_text(modes, skills))
            elif command == "/new":
                self.state.sessions.pop(str(chat), None)
                self.save()
                await self.replies.say(chat, "Your next message starts a new session.")
            elif command == "/mode":
                await self._mode(chat, argument.strip())
            elif command == "/agent":
                await self._agent(chat, argument.strip())
            elif command == "/stop":
                await self._stop(chat)
            elif command == "/undo":
                said = await self.undo.offer(chat, await self._current(chat))
                if said is not None:
                    await self.replies.say(chat, said)
            else:
                await self._converse(chat, message, text, sender=(user.id, principal.name), by=principal)
        except DomainError as exc:  # a refused message: unknown skill or mode, empty, unreadable file
            await self.replies.say(chat, str(exc))

    async def _converse(
        self, chat: int, message: Message, text: str, *, sender: tuple[int, str], by: Principal
    ) -> None:
        """The message, as `by`'s, to the chat's session (a new one, theirs, when there is none)."""
        author = by.decider("channel")
        session_id = await self._current(chat)
        started = session_id is None
        if session_id is None:
            # The chat's chosen agent (`/agent`), else the first telegram route for this chat or sender.
            chosen = self.state.agents.get(str(chat))
            agent = self.services.agent_routes.agent_for("telegram", chat=chat, user=sender, named=chosen)
            created = await self.services.sessions.create(
                options=SessionOptions(
                    title=title_of(text) or "Telegram",
                    mode=self.state.modes.get(str(chat)),
                    agent=agent,
                    origin="telegram",
                    created_by=author,
                )
            )
            session_id = created.session.id
        try:
            workspace = Path((await self.services.sessions.get(session_id)).workspace)
            chat_input = replace(await self._input(message, text, workspace), author=author)
            if started:  # remembered before the run starts, so its first events find the chat
                self.state.sessions[str(chat)] = session_id
                self.save()
            await self.services.sessions.submit(session_id, chat_input)
        except Exception:
            if started:  # a refused first message leaves no empty session behind
                self.state.sessions.pop(str(chat), None)
                self.save()
                await self.services.sessions.delete(session_id)
            raise

    async def _input(self, message: Message, text: str, workspace: Path) -> ChatInput:
        chat_input = ChatInput(text=text)
        saved: list[str] = []
        if message.photo:
            photo = message.photo[-1]  # the largest size
            data = await self._download(photo.file_id, photo.file_size)
            relative = self._save(workspace, f"photo-{photo.file_unique_id}.jpg", data)
            saved.append(relative)
            image = base64.b64encode(data).decode("ascii")
            chat_input.images.append(ImageInput(name=Path(relative).name, data=image, mime_type="image/jpeg"))
        if message.document:
            doc = message.document
            data = await self._download(doc.file_id, doc.file_size)
            relative = self._save(workspace, safe_name(doc.file_name, f"file-{doc.file_unique_id}"), data)
            saved.append(relative)
            if (doc.mime_type or "").startswith(TEXT_TYPES):
                chat_input.context_paths.append(relative)
        if saved:
            note = "\n".join(f"(I sent you a file, saved in the workspace as {path})" for path in saved)
            chat_input.text = f"{text}\n\n{note}".strip()
        return chat_input

    async def _download(self, file_id: str, size: int | None) -> bytes:
        if size is not None and size > MAX_FILE_BYTES:
            raise _FileRefused(f"that file is {size / 2**20:.0f} MB; the limit is {MAX_FILE_BYTES // 2**20} MB")
        try:
            found = await self.cards.bot.get_file(file_id)
            return bytes(await found.download_as_bytearray())
        except TelegramError as exc:
            raise _FileRefused(f"the file could not be fetched from Telegram ({type(exc).__name__})") from exc

    def _save(self, workspace: Path, name: str, data: bytes) -> str:
        folder = workspace / UPLOADS
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        if target.exists():  # never overwrite: a second upload of the same name gets its own
            target = folder / f"{target.stem}-{uuid.uuid4().hex[:6]}{target.suffix}"
        target.write_bytes(data)
        return str(target.relative_to(workspace))

    async def _mode(self, chat: int, name: str) -> None:
        session_id = await self._current(chat)
        if session_id is not None:
            result = await self.services.sessions.submit(session_id, ChatInput(text=f"/mode {name}".strip()))
            await self.replies.say(chat, result.detail)
            return
        if not name:
            modes = ", ".join(m.name for m in self.services.modes.list())
            await self.replies.say(chat, f"Modes: {modes}. Choose one with /mode NAME.")
            return
        self.services.modes.get(name)  # NotFound (a DomainError) names what exists
        self.state.modes[str(chat)] = name
        self.save()
        await self.replies.say(chat, f"Your next session starts in {name} mode.")

    async def _agent(self, chat: int, name: str) -> None:
        """`/agent NAME`: the chat's next session belongs to that agent (the current one ends here)."""
        if not name:
            agents = ", ".join(a.id for a in self.services.agents.list())
            await self.replies.say(chat, f"Agents: {agents}. Choose one with /agent NAME.")
            return
        agent = self.services.agents.get(name)  # UnknownAgent (a DomainError) names the agents there are
        self.state.agents[str(chat)] = agent.id
        self.state.sessions.pop(str(chat), None)
        self.save()
        await self.replies.say(chat, f"Your next message starts a new session with {agent.name}.")

    async def _stop(self, chat: int) -> None:
        session_id = await self._current(chat)
        if session_id is None:
            await self.replies.say(chat, "Nothing is running here.")
            return
        session = await self.services.sessions.stop(session_id)
        await self.replies.say(chat, f"Stopped; the session is {session.status}.")

    async def _current(self, chat: int) -> str | None:
        """The chat's session, if it still exists."""
        session_id = self.state.sessions.get(str(chat))
        if session_id is None:
            return None
        try:
            await self.services.sessions.get(session_id)
        except NotFound:
            self.state.sessions.pop(str(chat), None)
            self.save()
            return None
        return session_id

    async def _workspace(self, chat: int) -> Path:
        session_id = await self._current(chat)
        if session_id is None:
            return self.services.settings.resolved_workspace
        return Path((await self.services.sessions.get(session_id)).workspace)


class _FileRefused(BadRequest):
    """A photo or document that cannot be taken (too big, not fetched)."""
