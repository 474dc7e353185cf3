"""A server's tools changing while it runs: hearing of it in either protocol era, then re-listing.

A handshake-era server sends `notifications/tools/list_changed` unasked; a 2026-07-28 server
sends it only on a `subscriptions/listen` stream the client opens. Either way the connection's
`tools_stale` event is set, and a follower re-lists the tools so the next turn offers them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio
import anyio.lowlevel
import mcp_types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from backend.domain.tools import ToolInfo
from backend.mcp.catalog import list_tools

logger = logging.getLogger(__name__)


class ChangingTools(Protocol):
    """The part of a live connection this module reads and writes."""

    client: Client
    tools_stale: anyio.Event

    @property
    def handshake_era(self) -> bool: ...


async def on_message(stale: anyio.Event, message: IncomingMessage) -> None:
    """A server notification: a changed tool list marks the catalog stale."""
    if isinstance(message, mcp_types.ToolListChangedNotification):
        stale.set()
    await anyio.lowlevel.checkpoint()


async def listen_for_changes(conn: ChangingTools, tg: TaskGroup, *, server: str) -> None:
    """On a 2026-07-28 connection, subscribe to tool list changes; return once subscribed."""
    tools = conn.client.server_capabilities.tools
    if conn.handshake_era or tools is None or not tools.list_changed:
        return
    listening = anyio.Event()

    async def listen() -> None:
        try:
            async with conn.client.listen(tools_list_changed=True) as subscription:
                listening.set()
                async for _ in subscription:
                    conn.tools_stale.set()
        # Whatever ends the stream (the server refused it, or died), calls go on without it.
        except Exception as exc:  # noqa: BLE001
            logger.debug("MCP server %r: no longer listening for tool changes: %r", server, exc)
        finally:
            listening.set()

    tg.start_soon(listen)
    await listening.wait()


Vet = Callable[[dict[str, ToolInfo]], Awaitable[dict[str, ToolInfo]]]
"""Checks a listing before it is taken: marks the tools changed since they were pinned (tool_pins.py)."""


async def follow_changes(
    conn: ChangingTools,
    *,
    server: str,
    timeout: float,
    adopt: Callable[[dict[str, ToolInfo]], bool],
    vet: Vet | None = None,
) -> None:
    """Re-list the tools each time the server says they changed; `vet` checks them, then `adopt`
    takes them (False: the connection is no longer the server's, so stop)."""
    while True:
        await conn.tools_stale.wait()
        conn.tools_stale = anyio.Event()
        try:
            with anyio.fail_after(timeout):
                tools = await list_tools(conn.client, server, task_modes=conn.task_modes)
        except (MCPError, ValidationError, TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.warning("MCP server %r: re-listing its changed tools failed", server, exc_info=True)
            continue
        if vet is not None:
            tools = await vet(tools)
        if not adopt(tools):
            return
