"""Memory consolidation: older messages of a long session become workspace memory.

When a session holds more than its memory window of messages (counted from `memory_from`), the
older part is shown to the session's model as a transcript, and the model answers with one
`save_memory` call: a summary appended to `memory/HISTORY.md` and facts added to
`memory/MEMORY.md`. Those messages are then no longer sent to the model; MEMORY.md reaches it
through the system prompt instead. A model that will not cooperate costs nothing but the attempt:
the history stays as it was and the session goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from backend.domain.models import Message, ToolCallRequest, Usage
from backend.engine.models.client import ModelClient, ModelError, OnRetry
from shared import memory_files

log = logging.getLogger(__name__)

PROMPT_MEMORY_BYTES = 16_384
"""The most of MEMORY.md the system prompt carries."""
MESSAGE_CHARS = 2_000
TOOL_RESULT_CHARS = 500

CONSOLIDATION_PROMPT = (
    "You maintain the long-term memory of an agent that works for a person in one workspace. "
    "You are given the older part of a conversation, which is about to be removed from the "
    "agent's context, and the current MEMORY.md. Call save_memory exactly once:\n"
    "- history_entry: one paragraph summarising what happened in this part of the conversation "
    "(what was asked, done and decided, with dates), for the log in HISTORY.md.\n"
    "- new_facts: durable facts worth knowing in later sessions (the person's preferences, "
    "decisions, names, where things are), each one short self-contained sentence, optionally "
    "with a section such as 'Preferences' or 'Project'. Leave out facts MEMORY.md already holds "
    "and passing details. An empty list is fine."
)


class NewFact(BaseModel):
    """One fact the model wants remembered."""

    fact: str = Field(min_length=1)
    section: str | None = None


class SaveMemory(BaseModel):
    """The arguments of the `save_memory` tool."""

    history_entry: str = Field(min_length=1)
    new_facts: list[NewFact] = Field(default_factory=list)


# Written out (not SaveMemory.model_json_schema()): no $ref, which some providers reject.
SAVE_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "save_memory",
        "description": "Append a summary to HISTORY.md and add new facts to MEMORY.md.",
        "parameters": {
            "type": "object",
            "properties": {
                "history_entry": {
                    "type": "string",
                    "description": "one paragraph summarising this part of the conversation, with dates",
                },
                "new_facts": {
                    "type": "array",
                    "description": "durable facts not yet in MEMORY.md; may be empty",
                    "items": {
                        "type": "object",
                        "properties": {
                            "fact": {"type": "string", "description": "one short self-contained sentence"},
                            "section": {"type": "string", "description": "a heading, e.g. 'Preferences'"},
                        },
                        "required": ["fact"],
                    },
                },
            },
            "required": ["history_entry", "new_facts"],
        },
    },
}


@dataclass(kw_only=True)
class Consolidation:
    """What one consolidation attempt did.

    `memory_from` is the session's new value (unchanged unless `consolidated`); `error` says why
    an attempt failed; `usage` is what the model call cost, None when no call was made.
    """

    memory_from: int
    consolidated: bool = False
    facts: int = 0
    usage: Usage | None = None
    error: str | None = None


def split_point(active: list[Message], window: int) -> int | None:
    """Where to cut `active` (messages from `memory_from` on): the index of the first kept message.

    None when there are not more than `window` messages, or no clean cut exists. A clean cut
    starts at a user message and separates no tool call from its result; the newest
    `window // 2` messages are kept when such a cut allows, else the nearest newer cut is taken.
    """
    if len(active) <= window:
        return None
    target = max(len(active) - window // 2, 1)
    clean = clean_cuts(active)
    older = [i for i in clean if i <= target]
    if older:
        return older[-1]
    newer = [i for i in clean if i > target]
    return newer[0] if newer else None


def clean_cuts(active: list[Message]) -> list[int]:
    """Indexes (never 0) where `active` can be cut: a user message no tool call spans.

    A user message may arrive while tools run, landing between a call and its result; a call
    with no result yet (a run cut short) spans everything after it.
    """
    result_at = {m.tool_call_id: i for i, m in enumerate(active) if m.role == "tool" and m.tool_call_id}
    cuts: list[int] = []
    busy_until = -1
    for index, message in enumerate(active):
        if index > 0 and message.role == "user" and busy_until < index:
            cuts.append(index)
        for call in message.tool_calls:
            busy_until = max(busy_until, result_at.get(call.id, len(active)))
    return cuts


def render_transcript(messages: list[Message]) -> str:
    """The messages as plain text for the consolidation model, long contents cut."""
    lines = []
    for message in messages:
        when = message.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        if message.role == "tool":
            status = "error" if message.is_error else "result"
            lines.append(
                f"[{when}] tool {status} ({message.name or 'tool'}): {_cut(message.content, TOOL_RESULT_CHARS)}"
            )
            continue
        if message.content:
            lines.append(f"[{when}] {message.role}: {_cut(message.content, MESSAGE_CHARS)}")
        for call in message.tool_calls:
            arguments = _cut(json.dumps(call.arguments, ensure_ascii=False), TOOL_RESULT_CHARS)
            lines.append(f"[{when}] {message.role} called {call.name} {arguments}")
    return "\n".join(lines)


async def consolidate(
    *,
    model: ModelClient,
    history: list[Message],
    memory_from: int,
    window: int,
    workspace: Path,
    now: datetime | None = None,
    on_retry: OnRetry | None = None,
) -> Consolidation:
    """Consolidate the older messages of `history` (from idx `memory_from`) when past `window`.

    Nothing happens (and no model call is made) when the window is 0, not yet passed, or there
    is no clean cut. Otherwise the model summarises; a model error or an answer without a
    valid `save_memory` call is a failure that leaves `memory_from` as it was.
    """
    unchanged = Consolidation(memory_from=memory_from)
    active = [m for m in history if m.idx >= memory_from]
    cut = split_point(active, window) if window > 0 else None
    if cut is None:
        return unchanged
    older, upto = active[:cut], active[cut].idx
    current = await asyncio.to_thread(read_memory_for_prompt, workspace)
    request = [
        {"role": "system", "content": CONSOLIDATION_PROMPT},
        {
            "role": "user",
            "content": f"Current MEMORY.md:\n{current or '(empty)'}\n\n"
            f"Conversation to consolidate:\n{render_transcript(older)}",
        },
    ]

    async def ignore_delta(_: str) -> None:
        return None  # the summary is not part of the conversation: nothing streams to the person

    async def no_retry_note(_: str) -> None:
        return None

    try:
        turn = await model.complete(
            messages=request,
            tools=[SAVE_MEMORY_TOOL],
            on_delta=ignore_delta,
            on_retry=on_retry or no_retry_note,
        )
    except ModelError as exc:
        return _failed(unchanged, f"the model could not answer: {exc}")
    unchanged.usage = turn.usage
    try:
        arguments = _save_memory_arguments(turn.tool_calls)
    except ValueError as exc:
        return _failed(unchanged, str(exc))
    when = (now or datetime.now()).astimezone()
    facts = [(f.fact, f.section) for f in arguments.new_facts]
    try:
        await asyncio.to_thread(memory_files.append_history, workspace, arguments.history_entry, when=when)
        saved = await asyncio.to_thread(memory_files.save_facts, workspace, facts) if facts else []
    except (OSError, ValueError) as exc:
        return _failed(unchanged, f"memory files could not be written: {exc}")
    added = sum(1 for s in saved if s.added)
    return Consolidation(memory_from=upto, consolidated=True, facts=added, usage=turn.usage)


def read_memory_for_prompt(workspace: Path, limit: int = PROMPT_MEMORY_BYTES) -> str:
    """MEMORY.md's text for the system prompt, cut at a line when longer than `limit` bytes."""
    text = memory_files.read_text(memory_files.memory_path(workspace)).strip()
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    head = data[:limit].decode("utf-8", errors="ignore").rsplit("\n", 1)[0]
    return f"{head}\n[MEMORY.md continues beyond {limit} bytes; read the rest with memory_read]"


def _save_memory_arguments(calls: list[ToolCallRequest]) -> SaveMemory:
    call = next((c for c in calls if c.name == "save_memory"), None)
    if call is None:
        raise ValueError("the model did not call save_memory")
    if call.argument_error:
        raise ValueError(f"save_memory arguments are not valid JSON: {call.argument_error}")
    try:
        arguments = SaveMemory.model_validate(call.arguments)
    except ValidationError as exc:
        raise ValueError(f"save_memory arguments are invalid: {exc.errors()[0]['msg']}") from exc
    if not arguments.history_entry.strip():
        raise ValueError("save_memory history_entry is empty")
    return arguments


def _failed(result: Consolidation, reason: str) -> Consolidation:
    log.warning("memory consolidation skipped: %s", reason)
    result.error = reason
    return result


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more characters]"
