"""Accepting a changed tool's new definition (issue 34, item 3): an admin's word, audited.

A tool whose definition changed since it was pinned (backend/mcp/tool_pins.py) asks on every
call. An admin who has read the change accepts it here: the definition listed now becomes the
pin, an audit row names who accepted what, and the rules decide the tool's calls again. On a
shared Postgres the pin is shared; another host's pool sees the accept at its next listing of
the server (a restart, `list_changed`), and asks until then.
"""

from __future__ import annotations

from backend.auth import Principal
from backend.domain.errors import Conflict, Forbidden, NotFound
from backend.domain.models import AuditEntry, Door
from backend.domain.tools import ToolInfo, full_tool_name
from backend.mcp.pool import McpPool
from backend.mcp.tool_pins import StaleChange, UnknownChange
from backend.store.base import Store

ACCEPT_TOOL = "accept_tool_definition"
"""The audit log's tool name for an accept (the tool itself is in the row's arguments)."""


class ToolPinService:
    """Accepts changed tools' definitions for admins."""

    def __init__(self, *, pool: McpPool, store: Store) -> None:
        self._pool = pool
        self._store = store

    async def accept(self, server: str, tool: str, *, by: Principal, via: Door = "rest") -> ToolInfo:
        """Make the tool's current definition its pin; NotFound when it is not changed now,
        Conflict when someone accepted another definition meanwhile, Forbidden for a non-admin."""
        if not by.can("admin"):
            raise Forbidden(f"accepting a tool's new definition needs the admin role; {by.name} is {by.role}")
        info = self._pool.tool(full_tool_name(server, tool))
        change = info.changed if info is not None else None
        try:
            accepted = await self._pool.accept_tool(server, tool, by=by.name)
        except UnknownChange as exc:
            raise NotFound(str(exc)) from None
        except StaleChange as exc:
            raise Conflict(str(exc)) from None
        assert change is not None  # accept_tool raises UnknownChange otherwise
        await self._store.add_audit(
            AuditEntry(
                session_id="",
                tool_call_id="",
                tool_name=ACCEPT_TOOL,
                arguments={
                    "tool": accepted.name,
                    "fields": list(change.fields),
                    "fingerprint": change.fingerprint,
                    "replaced": change.pinned_fingerprint,
                },
                decision="allow",
                decided_by="user",
                decider=by.decider(via),
                detail=f"accepted the new definition of {accepted.name} ({', '.join(change.fields) or 'unchecked'})",
            )
        )
        return accepted
