"""What one run of a session works with: its mode, the tools that mode offers, the system prompt.

Computed afresh for every run, from files a person may edit at any time (modes, skills,
bootstrap files, memory), so a change counts from the next run without a restart. Both engines
take their prompt and tool list from here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from backend.agents import Agent
from backend.config import ToolSelectionConfig
from backend.domain.models import Session
from backend.domain.tools import ToolInfo
from backend.engine.turns.bootstrap import read_bootstrap_files
from backend.engine.turns.memory import read_memory_for_prompt
from backend.engine.turns.prompt import PromptParts, build_system_prompt
from backend.engine.turns.tool_selection import ToolSelection, select_tools
from backend.modes.model import Mode
from backend.modes.registry import ModeRegistry
from backend.rules.agent_fence import AgentFence
from backend.approvals.gate import GateSession
from backend.skills.catalog import SkillCatalog
from backend.skills.prompt import always_on_section, skills_summary


@dataclass(kw_only=True)
class Turn:
    mode: Mode
    system_prompt: str
    tools: list[ToolInfo]
    """Only the tools the mode offers: the model is never shown the others."""
    gate_session: GateSession
    selection: ToolSelection | None = None
    """Set when the mode offers more tools than `tool_selection.max_tools` (LiteLLM engine): the
    loop then shows the model a selection of `tools` per model call, and the gate only those."""


async def prepare_turn(
    session: Session,
    *,
    modes: ModeRegistry,
    skills: SkillCatalog,
    data_dir: Path,
    all_tools: list[ToolInfo],
    now: datetime | None = None,
    tool_selection: ToolSelectionConfig | None = None,
    remember_found: Callable[[list[str]], Awaitable[object]] | None = None,
    agent: Agent | None = None,
    fence: AgentFence | None = None,
) -> Turn:
    """Resolve the session's mode (UnknownMode if it is gone) and compose its system prompt.

    With `tool_selection`, a LiteLLM session whose mode offers too many tools gets a selection;
    `remember_found` persists the tools its `search_tools` calls add. The session's `agent`
    limits the servers whose tools are offered (the gate refuses the others) and adds its rules;
    `fence` keeps its calls out of the other agents' folders.
    """
    mode = modes.get(session.mode)
    workspace = Path(session.workspace)
    # One hop to a thread for all the file reading a turn does, not one per kind of file.
    found, bootstrap, memory = await asyncio.to_thread(
        lambda: (skills.list(workspace), read_bootstrap_files(workspace, data_dir), read_memory_for_prompt(workspace))
    )
    limited = agent is not None and agent.servers is not None
    if agent is not None and limited:
        all_tools = [t for t in all_tools if agent.offers_server(t.server)]
    tools = mode.offered_tools(all_tools)
    prompt = build_system_prompt(
        PromptParts(
            workspace=workspace,
            now=now or datetime.now().astimezone(),
            bootstrap=bootstrap,
            memory=memory,
            always_skills=always_on_section(found),
            skills_summary=skills_summary(found),
            mode_name=mode.name,
            mode_prompt=mode.prompt,
            session_instructions=session.instructions,
        )
    )
    gate_session = GateSession(
        session_id=session.id,
        workspace=workspace,
        mode=mode.name,
        rules=list(session.session_rules),
        mode_policies=dict(mode.policies),
        offered=frozenset(t.name for t in tools) if mode.tools != "all" or limited else None,
        agent_rules=agent.rules if agent is not None else None,
        agent_id=agent.id if agent is not None else None,
        sandbox=agent.config.sandbox if agent is not None else None,
        fence=fence,
    )
    selection = None
    # The claude-sdk engine hands tools to Claude Code, which has its own tool search.
    if tool_selection is not None and remember_found is not None and session.engine == "litellm":
        selection = select_tools(tools, tool_selection, found=session.found_tools, remember=remember_found)
    return Turn(mode=mode, system_prompt=prompt, tools=tools, gate_session=gate_session, selection=selection)
