"""The prompt builder: the system prompt a session's model sees.

Parts, in this order: identity and agent name; date and time; the workspace; the bootstrap files
(AGENTS.md, SOUL.md, USER.md, TOOLS.md); long-term memory (MEMORY.md); always-on skills; the
skills summary; the mode's prompt; and the session's own instructions last, so they win. Each
part is computed afresh for every run, so an edited file counts from the next turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

IDENTITY = (
    "You are {name}, an agent working for a person through tools. Every tool is an MCP tool; some "
    "calls pause until the person approves them, and a denied call comes back as an error with "
    "their reason: respect it and find another way. Work inside the workspace. Be concise, and "
    "finish with a short plain-text answer saying what you did."
)


@dataclass(frozen=True)
class BootstrapFile:
    """One of AGENTS.md, SOUL.md, USER.md, TOOLS.md as found for a session."""

    name: str
    path: Path
    text: str


@dataclass(kw_only=True)
class PromptParts:
    """Everything the system prompt is made of, already read and capped."""

    workspace: Path
    now: datetime
    agent_name: str = "Overseer"
    bootstrap: list[BootstrapFile] = field(default_factory=list)
    memory: str = ""
    """The workspace's memory/MEMORY.md."""
    always_skills: str = ""
    """Whole always-on skills (backend.skills.prompt.always_on_section)."""
    skills_summary: str = ""
    """The `<available_skills>` block (backend.skills.prompt.skills_summary)."""
    mode_name: str = ""
    mode_prompt: str = ""
    session_instructions: str = ""


def build_system_prompt(parts: PromptParts) -> str:
    sections = [
        IDENTITY.format(name=parts.agent_name),
        f"Current date and time: {parts.now.strftime('%Y-%m-%d %H:%M %Z (%A)').strip()}",
        f"Workspace: {parts.workspace} (relative paths are resolved against it)",
    ]
    for file in parts.bootstrap:
        if file.text.strip():
            sections.append(f'<bootstrap file="{file.name}" path="{file.path}">\n{file.text.strip()}\n</bootstrap>')
    if parts.memory.strip():
        sections.append("Long-term memory (memory/MEMORY.md):\n" + parts.memory.strip())
    if parts.always_skills.strip():
        sections.append(parts.always_skills.strip())
    if parts.skills_summary.strip():
        sections.append(parts.skills_summary.strip())
    if parts.mode_prompt.strip():
        title = f"Mode: {parts.mode_name}\n" if parts.mode_name else ""
        sections.append(title + parts.mode_prompt.strip())
    if parts.session_instructions.strip():
        sections.append("Instructions for this session:\n" + parts.session_instructions.strip())
    return "\n\n".join(sections)
