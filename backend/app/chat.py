"""What a person types in the chat box: a message with attachments, or a command.

`/new` clears the history the model sees, `/help` lists commands, modes and skills, `/mode NAME`
switches modes; a leading `/skill-name` attaches that skill. A leading `/word` that is none of
these is refused with the list of what is, rather than sent to the model as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from backend.domain.errors import BadRequest
from backend.domain.models import Attachment, Decider, Session
from backend.engine.turns.context import ContextError, context_attachments, image_attachment
from backend.engine.runner import SessionBusy, SessionRunner
from backend.skills.model import UnknownSkill
from backend.skills.prompt import ATTACHED_PREAMBLE, attached_skills_section

COMMANDS: dict[str, str] = {
    "new": "/new: clear the conversation; the agent starts afresh (the transcript stays visible)",
    "help": "/help: this list",
    "mode": "/mode NAME: switch this session to another mode (from its next run)",
}
_LEADING_WORD = re.compile(r"^/([a-z0-9][a-z0-9_-]*)(?=\s|$)\s*")


@dataclass(frozen=True)
class ImageInput:
    name: str
    data: str
    mime_type: str


@dataclass(kw_only=True)
class ChatInput:
    text: str
    attached_skills: list[str] = field(default_factory=list)
    context_paths: list[str] = field(default_factory=list)
    images: list[ImageInput] = field(default_factory=list)
    author: Decider | None = None
    """Who wrote it, through which door (None: Overseer itself)."""


class ChatResult(BaseModel):
    """A sent message (`idx`) or a command's effect (`command`, `detail`)."""

    idx: int | None = None
    command: str | None = None
    detail: str = ""
    attached_skills: list[str] = []


class Chat:
    """Turns chat input into messages and commands for a session."""

    def __init__(self, runner: SessionRunner) -> None:
        self.runner = runner

    async def submit(self, session_id: str, chat: ChatInput) -> ChatResult:
        session = await self.runner.store.get_session(session_id)
        workspace = Path(session.workspace)
        text = chat.text.strip()
        match = _LEADING_WORD.match(text)
        if match and match.group(1) in COMMANDS:
            return await self._command(session_id, match.group(1), text[match.end() :].strip())
        skills = list(chat.attached_skills)
        known = {s.name for s in self.runner.skills.list(workspace)}
        while match:
            name = match.group(1)
            if name not in known:
                raise BadRequest(
                    f"/{name} is not a command or a skill. Commands: {', '.join('/' + c for c in COMMANDS)}; "
                    f"skills: {', '.join('/' + k for k in sorted(known)) or 'none'}"
                )
            skills.append(name)
            text = text[match.end() :]
            match = _LEADING_WORD.match(text)
        attachments = self._skill_attachments(skills, workspace)
        try:
            attachments += context_attachments(workspace, chat.context_paths)
            attachments += [image_attachment(name=i.name, data=i.data, mime_type=i.mime_type) for i in chat.images]
        except OSError as exc:
            raise ContextError(f"a context path cannot be read: {exc}") from exc
        if not text and not attachments:
            raise BadRequest("the message is empty")
        message = await self.runner.send(session_id, text, attachments=attachments, author=chat.author)
        return ChatResult(idx=message.idx, attached_skills=[a.name for a in attachments if a.kind == "skill"])

    def _skill_attachments(self, names: list[str], workspace: Path) -> list[Attachment]:
        attachments = []
        for name in dict.fromkeys(names):
            try:
                skill = self.runner.skills.get(name, workspace)
            except UnknownSkill as exc:
                # A 404 to a message reads as "no such session": a skill the message names that does
                # not exist is a fault of the message (400), like an unknown /command.
                raise BadRequest(str(exc)) from exc
            if not skill.available:
                raise BadRequest(f"skill {name!r} cannot be attached: {skill.status}")
            text = attached_skills_section([skill])
            if attachments:  # the section's opening sentence, once per message
                text = text.removeprefix(ATTACHED_PREAMBLE).lstrip("\n")
            attachments.append(Attachment(kind="skill", name=name, text=text))
        return attachments

    async def _command(self, session_id: str, name: str, argument: str) -> ChatResult:
        runner = self.runner
        if name == "help":
            detail = self._help(await runner.store.get_session(session_id))
        elif name == "mode":
            if not argument:
                current = (await runner.store.get_session(session_id)).mode
                modes = ", ".join(m.name for m in runner.modes.list())
                detail = f"This session is in {current} mode. Modes: {modes}. Switch with /mode NAME."
            else:
                await runner.set_mode(session_id, argument)
                detail = f"Switched to {argument} mode; it applies from the next message."
        else:
            if runner.is_running(session_id):
                raise SessionBusy("the session is running; stop it before /new clears its history")
            history = await runner.store.list_messages(session_id)
            await runner.clear_history(session_id, history[-1].idx + 1 if history else 0)
            detail = "History cleared: the agent starts afresh from your next message."
        await runner.bus.publish(session_id, "notice", {"command": name, "text": detail})
        return ChatResult(command=name, detail=detail)

    def _help(self, session: Session) -> str:
        workspace = Path(session.workspace)
        lines = ["Commands:", *(f"  {text}" for text in COMMANDS.values()), "Modes:"]
        lines += [f"  {m.name}: {m.description}" for m in self.runner.modes.list()]
        skills = self.runner.skills.list(workspace)
        lines.append("Skills (attach with /name at the start of a message):" if skills else "Skills: none")
        lines += [f"  /{s.name}: {s.description}" + ("" if s.available else f" ({s.status})") for s in skills]
        return "\n".join(lines)
