"""The prompt builder: the system prompt a session's model sees.

Parts, in order: identity, date and time, workspace, long-term memory (MEMORY.md), then the mode's
prompt and the session's own instructions last so they win. Bootstrap files and skills join in
later issues.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

IDENTITY = (
    "You are {name}, an agent working for a person through tools. Every tool is an MCP tool; some "
    "calls pause until the person approves them, and a denied call comes back as an error with "
    "their reason: respect it and find another way. Work inside the workspace. Be concise, and "
    "finish with a short plain-text answer saying what you did."
)


@dataclass(kw_only=True)
class PromptParts:
    """Everything the system prompt is made of."""

    workspace: Path
    now: datetime
    agent_name: str = "Overseer"
    mode_prompt: str = ""
    session_instructions: str = ""
    memory: str = ""
    """The workspace's memory/MEMORY.md, already capped."""


def build_system_prompt(parts: PromptParts) -> str:
    sections = [
        IDENTITY.format(name=parts.agent_name),
        f"Current date and time: {parts.now.strftime('%Y-%m-%d %H:%M %Z').strip()}",
        f"Workspace: {parts.workspace} (relative paths are resolved against it)",
    ]
    if parts.memory.strip():
        sections.append("Long-term memory (memory/MEMORY.md):\n" + parts.memory.strip())
    if parts.mode_prompt.strip():
        sections.append(parts.mode_prompt.strip())
    if parts.session_instructions.strip():
        sections.append("Instructions for this session:\n" + parts.session_instructions.strip())
    return "\n\n".join(sections)
