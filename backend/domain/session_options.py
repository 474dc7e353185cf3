"""SessionOptions: what a new session is made with, one value from the transport to the runner.

The REST body, the MCP gateway, the channels, the scheduler, the workflows and the command line
build one; SessionService derives a child's from it (its parent's workspace, model, engine and
agent) and the runner makes the session from it. Nothing here is checked: an unknown mode,
agent or workspace is refused where the session is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.domain.models import Decider, EngineName, SessionOrigin


@dataclass(frozen=True, kw_only=True)
class SessionOptions:
    """A new session's settings; None (or "") means the default named on each field."""

    title: str | None = None
    """Default: the first line of its first message (a started session's: "invoke" without one)."""
    mode: str | None = None
    """Default: the agent's mode, else `agent`."""
    model: str | None = None
    """Default: the parent's (a child of its parent's agent), else the agent's, else the host's."""
    engine: EngineName | None = None
    """Default: the parent's, else the host's default engine."""
    workspace: str | Path | None = None
    """Default: the parent's (a child of its parent's agent), else the mode's `default_folder`
    under the agent's workspace, else the agent's workspace."""
    chooses_workspace: bool = False
    """Whoever asked is no admin: `workspace` must be one of the allowed workspaces exactly
    (backend/engine/workspaces.py); an admin may name any folder under an allowed root."""
    agent: str | None = None
    """The named agent it belongs to. Default: its parent's, else main."""
    instructions: str = ""
    """Added to the system prompt of every turn."""
    origin: SessionOrigin | None = None
    """Who started it. Default: `agent` for a sub-agent; else `api` for one SessionService.start
    starts, `user` for one created otherwise."""
    parent_id: str | None = None
    """The session it is nested under (a sub-agent), which may not nest deeper than `max_agent_depth`."""
    fork: bool = False
    """Start from a copy of the parent's finished turns (needs `parent_id`; SessionService does the copy)."""
    sdk_session_id: str | None = None
    """claude-sdk: the SDK session its first run forks. Default: the parent's, for a fork of a claude-sdk parent."""
    created_by: Decider | None = None
    """Who asked for it, through which door: its owner."""
    schedule_id: str | None = None
    """The scheduled job that started it."""
    workflow_run_id: str | None = None
    """The workflow run whose step it is."""
