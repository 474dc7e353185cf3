"""Tools pinned against silent change (issue 34, item 3): a "rug pull" is noticed, not trusted.

The first time a server's tool is listed, its name, title, description, input schema and
annotations are fingerprinted (sha256 of their canonical JSON) and stored as its pin. Every
later listing (at a start or restart, after `list_changed`, after an upgrade) is compared with
the pins: a tool whose definition differs is handed on with `ToolInfo.changed` set, which makes
every call of it ask (backend/rules/pinned_tools.py) with the change shown as a diff, until an
admin accepts the new definition (`accept`), which becomes the pin.

Pins are kept per server name, with the server's identity (its command line or URL) recorded
beside them: a server that keeps its name but now runs another command is shown so in the diff.
Overseer's own servers are not pinned: they change only with Overseer itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shlex
from datetime import UTC, datetime
from collections.abc import Collection
from typing import Any, Protocol, get_args

from backend.domain.tool_pins import PinnedField, ToolChange, ToolPin
from backend.domain.tools import ToolInfo
from backend.mcp.config import BUILTIN_SERVERS, McpServerConfig

logger = logging.getLogger(__name__)

FIELDS: tuple[PinnedField, ...] = get_args(PinnedField)


class PinStore(Protocol):
    """Where pins are kept: the host's Store (backend/store/sql_tool_pins.py)."""

    async def pin_tool(self, pin: ToolPin) -> ToolPin: ...
    async def tool_pins(self, server: str) -> list[ToolPin]: ...
    async def repin_tool(self, pin: ToolPin, *, replacing: str) -> bool: ...


def server_identity(config: McpServerConfig) -> str:
    """What a server is, beside its name: the command line of a stdio server, a remote one's URL."""
    if config.is_remote:
        return config.url or ""
    return shlex.join([config.command, *config.args])


def definition(tool: ToolInfo) -> dict[str, Any]:
    """The parts of a tool a pin covers (what the model is shown and what the rules read)."""
    hints = tool.annotations.model_dump(exclude={"title"})
    return {
        "name": tool.tool,
        "title": tool.annotations.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": {key: value for key, value in hints.items() if value is not None},
    }


def fingerprint(spec: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a definition (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def definition_text(spec: dict[str, Any]) -> str:
    """A definition as text a line diff reads well: one section per part, the JSON indented."""
    parts = [
        f"name: {spec.get('name')}",
        f"title: {spec.get('title') or '(none)'}",
        "description:",
        *[f"  {line}" for line in str(spec.get("description") or "").splitlines()],
        "input_schema:",
        *[f"  {line}" for line in json.dumps(spec.get("input_schema"), indent=2, sort_keys=True).splitlines()],
        "annotations:",
        *[f"  {line}" for line in json.dumps(spec.get("annotations"), indent=2, sort_keys=True).splitlines()],
    ]
    return "\n".join(parts) + "\n"


def change_of(pin: ToolPin, tool: ToolInfo, *, identity: str) -> ToolChange | None:
    """How `tool` as listed differs from its pin, or None when it does not."""
    now = definition(tool)
    digest = fingerprint(now)
    if digest == pin.fingerprint:
        return None
    moved = pin.identity != identity
    return ToolChange(
        server=pin.server,
        tool=pin.tool,
        fields=[field for field in FIELDS if pin.definition.get(field) != now.get(field)],
        before=definition_text(pin.definition),
        after=definition_text(now),
        fingerprint=digest,
        pinned_fingerprint=pin.fingerprint,
        pinned_at=pin.accepted_at or pin.first_seen,
        identity_before=pin.identity if moved else None,
        identity_after=identity if moved else None,
    )


class UnknownChange(LookupError):
    """There is no changed tool of that name to accept (never listed, or not changed now)."""


class StaleChange(LookupError):
    """The tool changed again (or was accepted by someone else) since the change was shown."""


class ToolPins:
    """Vets each listing of a server's tools against their pins, and accepts changes."""

    def __init__(self, store: PinStore, *, unpinned: Collection[str] = BUILTIN_SERVERS) -> None:
        """`unpinned`: servers whose tools are trusted as listed (Overseer's own)."""
        self._store = store
        self._unpinned = frozenset(unpinned)

    async def vet(self, server: str, config: McpServerConfig, tools: dict[str, ToolInfo]) -> dict[str, ToolInfo]:
        """The listing with every changed tool marked; a tool seen for the first time is pinned.

        Fails closed: when the pins cannot be read or written, every tool is marked changed (it
        asks) with the reason in its diff.
        """
        if server in self._unpinned or not tools:
            return tools
        identity = server_identity(config)
        try:
            pins = {pin.tool: pin for pin in await self._store.tool_pins(server)}
            for name, tool in tools.items():
                if name not in pins:
                    pins[name] = await self._store.pin_tool(self._pin(server, identity, tool))
        except Exception as exc:  # noqa: BLE001  # a store fault must not let a tool through unchecked
            logger.exception("MCP server %r: its tools could not be checked against their pins", server)
            return {name: _unchecked(server, tool, exc) for name, tool in tools.items()}
        vetted = {name: _marked(tool, change_of(pins[name], tool, identity=identity)) for name, tool in tools.items()}
        for change in (t.changed for t in vetted.values() if t.changed is not None):
            logger.warning("MCP server %r: tool %r changed (%s) since it was pinned", server, change.tool, change.fields)
        return vetted

    async def accept(self, server: str, config: McpServerConfig, tool: ToolInfo, *, by: str) -> ToolPin:
        """Make the tool's definition as listed now its pin, accepted by `by`.

        UnknownChange when the tool is not changed now; StaleChange when its pin is no longer the
        one it was compared with (someone accepted first).
        """
        change = tool.changed
        if change is None or server in self._unpinned:
            raise UnknownChange(f"tool {tool.tool!r} of MCP server {server!r} has no change to accept")
        pins = {pin.tool: pin for pin in await self._store.tool_pins(server)}
        old = pins.get(tool.tool)
        if old is None or old.fingerprint != change.pinned_fingerprint:
            raise StaleChange(f"tool {tool.tool!r} of MCP server {server!r} was accepted meanwhile; look again")
        pin = self._pin(server, server_identity(config), tool).model_copy(
            update={"first_seen": old.first_seen, "accepted_by": by}
        )
        pin.accepted_at = pin.accepted_at or _now()
        if not await self._store.repin_tool(pin, replacing=old.fingerprint):
            raise StaleChange(f"tool {tool.tool!r} of MCP server {server!r} was accepted meanwhile; look again")
        return pin

    @staticmethod
    def _pin(server: str, identity: str, tool: ToolInfo) -> ToolPin:
        spec = definition(tool)
        return ToolPin(server=server, tool=tool.tool, identity=identity, fingerprint=fingerprint(spec), definition=spec)


def _marked(tool: ToolInfo, change: ToolChange | None) -> ToolInfo:
    return tool if change is None else tool.model_copy(update={"changed": change})


def _unchecked(server: str, tool: ToolInfo, exc: Exception) -> ToolInfo:
    """A tool that could not be compared with its pin: it asks, saying why."""
    spec = definition(tool)
    text = definition_text(spec)
    change = ToolChange(
        server=server,
        tool=tool.tool,
        fields=[],
        before=f"(its pin could not be read: {type(exc).__name__})\n",
        after=text,
        fingerprint=fingerprint(spec),
        pinned_fingerprint="",
        pinned_at=_now(),
    )
    return _marked(tool, change)


def _now() -> datetime:
    return datetime.now(UTC)
