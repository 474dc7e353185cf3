"""What the Telegram channel remembers across restarts, kept in one private JSON file.

The update offset (so no message is handled twice), each chat's current session and mode, and
where each approval's card was sent (so an answer given anywhere, even after a restart, edits it).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from backend.paths import private_dir, private_opener

log = logging.getLogger(__name__)


class Card(BaseModel):
    """One approval message in one chat."""

    chat_id: int
    message_id: int


class TelegramState(BaseModel):
    """The channel's memory; `save()` writes it atomically."""

    offset: int | None = None
    """The next update id to ask for: everything before it was handled."""
    sessions: dict[str, str] = Field(default_factory=dict)
    """chat id -> the session that chat's messages continue."""
    modes: dict[str, str] = Field(default_factory=dict)
    """chat id -> the mode its next new session starts in (`/mode NAME` before any session)."""
    agents: dict[str, str] = Field(default_factory=dict)
    """chat id -> the named agent its new sessions belong to (`/agent NAME`); else routed (issue 19)."""
    cards: dict[str, list[Card]] = Field(default_factory=dict)
    """approval id -> the messages that ask it."""
    reasons: dict[str, str] = Field(default_factory=dict)
    """"chat:user" -> the approval that user's next message in that chat gives the deny reason of
    (kept, so a reason written after a restart is not taken for a prompt)."""

    @classmethod
    def load(cls, path: Path) -> TelegramState:
        """The state saved at `path`, or a fresh one (a broken file is logged and started over)."""
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValidationError, ValueError) as exc:
            log.warning("telegram: %s is unreadable (%s); starting with a fresh state", path, type(exc).__name__)
            return cls()

    def save(self, path: Path) -> None:
        private_dir(path.parent)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8", opener=private_opener) as out:
            out.write(json.dumps(self.model_dump(mode="json")))
        os.replace(tmp, path)

    def chat_of(self, session_id: str) -> int | None:
        """The chat whose conversation `session_id` is, if any."""
        for chat, sid in self.sessions.items():
            if sid == session_id:
                return int(chat)
        return None
