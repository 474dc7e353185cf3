"""Between our transcript and the CLI's: what a run sends, and assistant turns as we store them.

The CLI keeps its own transcript and resumes it by session id, so a run sends only what the
CLI has not seen: the person's messages since the last answer. A session with history but
nothing to resume (its first SDK run after a `/new`, or a fork of a session that never ran
on the SDK) gets that history as context in front.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from backend.domain.models import Message, ToolCallRequest
from backend.engine.turns.context import user_content

_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.DOTALL)
MAX_CONTEXT_CHARS = 20_000
"""Earlier history given as context is cut to its last this many characters."""


def unsent_user_messages(history: list[Message], *, memory_from: int = 0) -> list[Message]:
    """The person's messages since the last assistant message."""
    visible = [m for m in history if m.idx >= memory_from]
    last_answer = max((m.idx for m in visible if m.role == "assistant"), default=-1)
    return [m for m in visible if m.role == "user" and m.idx > last_answer]


def earlier_context(history: list[Message], *, memory_from: int, before: int) -> str:
    """Messages before idx `before` as plain text, for a run with no CLI session to resume."""
    lines = []
    for m in history:
        if m.idx < memory_from or m.idx >= before:
            continue
        if m.role == "tool":
            images = sum(1 for media in m.media if media.kind == "image")
            shown = f" [{images} image{'s' if images > 1 else ''}, not repeated here]" if images else ""
            lines.append(f"[result of {m.name}] {m.content}{shown}")
        elif m.role in ("user", "assistant"):
            calls = "".join(f"\n[called {c.name} {c.arguments}]" for c in m.tool_calls)
            lines.append(f"{m.role}: {m.content}{calls}")
    text = "\n".join(lines)[-MAX_CONTEXT_CHARS:]
    return f"<earlier_conversation>\n{text}\n</earlier_conversation>" if text else ""


def prompt_blocks(messages: list[Message], *, preamble: str = "") -> list[dict[str, Any]]:
    """Anthropic content blocks of one prompt: a preamble, then each message's text and images."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": preamble}] if preamble else []
    for message in messages:
        content = user_content(message)
        if isinstance(content, str):
            if content:
                blocks.append({"type": "text", "text": content})
            continue
        for part in content:
            if part.get("type") == "image_url":
                match = _DATA_URL.match(part["image_url"]["url"])
                if match:
                    source = {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
                    blocks.append({"type": "image", "source": source})
            elif part.get("text"):
                blocks.append({"type": "text", "text": part["text"]})
    return blocks


def user_turn(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed user message for `ClaudeSDKClient.query`."""
    return {"type": "user", "message": {"role": "user", "content": blocks}, "parent_tool_use_id": None}


def result_text(content: Any) -> str:
    """The text of a tool result block's content (a str or a list of blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


@dataclass(kw_only=True)
class AssistantDraft:
    """One API message the CLI reports block by block, gathered until it can be stored whole."""

    message_id: str | None
    texts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    """Its reasoning, stored for the person; the CLI keeps (and resends) its own transcript."""

    @property
    def empty(self) -> bool:
        return not self.texts and not self.tool_calls

    def message(self, session_id: str) -> Message:
        return Message(
            session_id=session_id,
            role="assistant",
            content="\n\n".join(self.texts),
            tool_calls=self.tool_calls,
            thinking="\n\n".join(self.thinking),
        )
