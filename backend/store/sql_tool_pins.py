"""Tool pins' rows (issue 34), written once for both databases; mixed into SqlStore.

One row per (server, tool): the definition first seen, or the one an admin last accepted. The
first writer wins (two hosts listing a new server at once pin the same thing, or the one that
came first); an accept replaces a pin only while it is still the one the admin was shown.
"""

from __future__ import annotations

from backend.domain.tool_pins import ToolPin
from backend.store.sql_seam import SqlSeam


class SqlToolPins(SqlSeam):
    """Pin, list and re-pin tools' definitions."""

    async def pin_tool(self, pin: ToolPin) -> ToolPin:
        """Store `pin` unless the tool has one already; the pin in force either way."""
        row = (pin.server, pin.tool, pin.fingerprint, self.sql.dialect.time(pin.first_seen), pin.model_dump_json())
        await self._execute(self.sql.insert_tool_pin, row)
        return next(p for p in await self.tool_pins(pin.server) if p.tool == pin.tool)

    async def tool_pins(self, server: str) -> list[ToolPin]:
        """The server's pinned tools, by name."""
        rows = await self._fetch_all(self.sql.list_tool_pins, (server,))
        return [ToolPin.model_validate_json(r[0]) for r in rows]

    async def repin_tool(self, pin: ToolPin, *, replacing: str) -> bool:
        """Put `pin` in place of the tool's pin whose fingerprint is `replacing`; False when the
        pin is no longer that one (another admin accepted meanwhile)."""
        changes = (pin.fingerprint, pin.model_dump_json(), pin.server, pin.tool, replacing)
        return await self._execute(self.sql.replace_tool_pin, changes) == 1
