"""Tools pinned against silent change (issue 34, item 3): what was first seen of a server's tool,
and how a later listing differs from it.

The first listing of a tool is trusted as it is (its definition becomes the pin); any later
listing whose name, description, input schema or annotations differ makes the tool *changed*
until an admin accepts the new definition, which then becomes the pin.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field


PinnedField = Literal["name", "title", "description", "input_schema", "annotations"]
"""The parts of a definition a fingerprint covers, as a change names them."""


class ToolPin(BaseModel):
    """A server's tool as it was pinned: first seen, or last accepted by an admin."""

    server: str
    tool: str
    identity: str
    """What the server was when pinned: its command line, or its URL."""
    fingerprint: str
    """sha256 of the canonical JSON of `definition`."""
    definition: dict[str, Any]
    """The name, title, description, input schema and annotations, as fingerprinted."""
    first_seen: datetime = Field(default_factory=lambda: datetime.now(UTC))
    accepted_by: str | None = None
    """The admin who accepted this definition in place of an earlier one; None for the first seen."""
    accepted_at: datetime | None = None


class ToolChange(BaseModel):
    """How a tool's definition now differs from its pin: shown on the card, and why every call asks."""

    server: str
    tool: str
    fields: list[PinnedField]
    """What changed, in the order of the definition."""
    before: str
    """The pinned definition as text (one part per section), for a line diff."""
    after: str
    """The definition listed now, as the same text."""
    fingerprint: str
    """The new definition's fingerprint: what an admin accepts (a later change needs accepting again)."""
    pinned_fingerprint: str
    pinned_at: datetime
    identity_before: str | None = None
    """The server's command or URL at the pin, when it differs from the server's now."""
    identity_after: str | None = None
