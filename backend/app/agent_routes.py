"""AgentRoutes: which named agent a message coming through a door belongs to (issue 19).

The transports (Telegram, the heartbeat, REST, the MCP gateway) ask here rather than apply
`routes:` themselves: the one it names, else the first route it matches, else main. The routes
are read at each call, so an admin's edit of `agents:` or `routes:` is in force at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from backend.agents import Agents
from backend.routing import Channel, route


class AgentRoutes:
    """Routes a message to an agent by the door it came through, its chat and its sender."""

    def __init__(self, agents: Agents) -> None:
        self._agents = agents

    def agent_for(
        self,
        channel: Channel,
        *,
        chat: str | int | None = None,
        user: str | int | Sequence[str | int] | None = None,
        named: str | None = None,
    ) -> str:
        """The id of the agent the message goes to: `named`, else the first matching route, else main.

        `user` may be several names of one sender (a Telegram user id and the principal it acts as).
        """
        return route(self._agents.routes, channel=channel, chat=chat, user=user, named=named)
