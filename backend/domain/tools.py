"""Tools as the host sees them: a catalog entry and the result of one call."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.domain.tool_pins import ToolChange

ServerType = Literal["stdio", "http", "sse"]
"""How the host reaches an MCP server: a child process, or a remote one over HTTP."""

TOOL_PREFIX = "mcp__"


def full_tool_name(server: str, tool: str) -> str:
    """The name a model sees: `mcp__<server>__<tool>`, as Claude Code spells MCP tools."""
    return f"{TOOL_PREFIX}{server}__{tool}"


def split_tool_name(name: str) -> tuple[str, str] | None:
    """`mcp__srv__tool` -> ("srv", "tool"); None for a name that is not an MCP tool name."""
    if not name.startswith(TOOL_PREFIX):
        return None
    server, sep, tool = name[len(TOOL_PREFIX) :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


class ToolAnnotations(BaseModel):
    """What the server says about a tool. Hints from a server, not facts."""

    title: str | None = None
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class ToolInfo(BaseModel):
    """One tool in the catalog, under its full name."""

    name: str
    server: str
    tool: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    changed: ToolChange | None = Field(default=None, exclude=True)
    """Set while the definition differs from the tool's pin (issue 34): every call asks until an
    admin accepts it. Not part of the tool as listed (kept out of dumps)."""


FOR_MODEL_ONLY = "[For the model alone: the tool did not mean this for you]"
FOR_USER_ONLY = "[For you alone: the tool kept this from the model]"


class ToolResult(BaseModel):
    """What a tool call gave back. `is_error` results are shown to the model, never raised."""

    text: str = ""
    is_error: bool = False
    images: list[dict[str, str]] = Field(default_factory=list)
    """Images for the model, as {"data": base64, "mime_type": ...}: only types models read, none
    over the size limit (`backend.mcp.results` turns the others into a note in `text`)."""
    audio: list[dict[str, str]] = Field(default_factory=list)
    """Audio clips, the same shape: kept for the person; the model gets a note in `text`."""
    structured: dict[str, Any] | None = None
    """The tool's structured content, for programs; the model reads `text` (which holds it as
    JSON when the tool sent no text)."""
    spilled_to: str | None = None
    """Where the full text was written when the result was cut."""
    outside_text: str | None = Field(default=None, exclude=True)
    """Set when the result is text from outside (issue 34: a page, a fetched URL, a server not
    trusted): where it came from. The gate tags the transcript and marks it as data for the model."""
    user_text: str = ""
    """Content the tool marked for the person alone (`audience: ["user"]`): on the tool card,
    never sent to the model."""
    user_media: list[dict[str, str]] = Field(default_factory=list)
    """Images and audio for the person alone, as {"kind", "data", "mime_type"}: kept, never sent."""
    model_only: list[str] = Field(default_factory=list)
    """The parts of `text` the tool marked for the model alone (`audience: ["assistant"]`)."""

    def card_text(self) -> str:
        """What the tool card shows: the model's text, what was for the model alone moved under a
        mark of its own, and what was for the person alone after it (see `backend.mcp.results`)."""
        if not self.model_only and not self.user_text:
            return self.text  # as it is, to the last newline
        body = self.text
        for part in self.model_only:  # each is one or more whole lines of `text`
            body = body.replace(part + "\n", "", 1) if part + "\n" in body else body.replace(part, "", 1)
        parts = [body.strip("\n")]
        if self.model_only:
            parts.append(FOR_MODEL_ONLY + "\n" + "\n".join(self.model_only))
        if self.user_text:
            parts.append(FOR_USER_ONLY + "\n" + self.user_text)
        return "\n\n".join(p for p in parts if p)

    @classmethod
    def error(cls, text: str) -> ToolResult:
        return cls(text=text, is_error=True)
