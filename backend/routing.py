"""Which named agent a message goes to (issue 19): the one it names, else the first matching
route of `routes:`, else `main`.

A route matches on any of channel, chat and user; what it leaves out matches anything:

    routes:
      - {channel: telegram, chat: "-100123", agent: reviewer}
      - {user: alice, agent: research}
      - {channel: cron, agent: ops}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

Channel = Literal["telegram", "gateway", "rest", "cron", "heartbeat"]
"""The doors a message can come through that route to an agent."""

MAIN = "main"
"""The agent of a message that names none and matches no route."""


def _text(value: Any) -> Any:
    # Telegram chat and user ids are numbers in YAML; a route compares them as text.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Key = Annotated[str | None, BeforeValidator(_text)]


class Route(BaseModel):
    """One entry of `routes:`: where messages matching every given field go."""

    model_config = ConfigDict(extra="forbid")
    channel: Channel | None = None
    chat: Key = None
    """The chat (a Telegram chat id) the message came from."""
    user: Key = None
    """Who sent it: a principal's name (`users:`), or a Telegram user id."""
    agent: str

    def matches(self, *, channel: Channel, chat: str | None, user: str | None) -> bool:
        """Every field this route gives equals the message's."""
        return (
            (self.channel is None or self.channel == channel)
            and (self.chat is None or self.chat == chat)
            and (self.user is None or self.user == user)
        )


def route(
    routes: Sequence[Route],
    *,
    channel: Channel,
    chat: str | int | None = None,
    user: str | int | Sequence[str | int] | None = None,
    named: str | None = None,
) -> str:
    """The id of the agent a message goes to: `named`, else the first route it matches, else main.

    `user` may be several names of one sender (a Telegram user id and the principal it acts as):
    a route written with either matches.
    """
    if named:
        return named
    chat_key = _text(chat)
    names = [user] if user is None or isinstance(user, (str, int)) else list(user)
    for entry in routes:
        if any(entry.matches(channel=channel, chat=chat_key, user=_text(name)) for name in names):
            return entry.agent
    return MAIN
