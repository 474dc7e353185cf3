"""Agents as admins list, create and edit them (issue 19): validated, written to the config file,
then in force at once for new sessions and turns.

A change is validated against the servers and modes there are now, exactly as at start-up, before
anything is written; one that does not validate changes nothing. The file keeps its `${VAR}`
references (update_config_file reads it raw).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from backend.agents import AgentConfig, Agents
from backend.config import Settings, update_config_file
from backend.domain.errors import Conflict


class AgentAdmin:
    """The one writer of `agents:`; `agents` is the live directory it keeps up to date."""

    def __init__(
        self,
        *,
        settings: Settings,
        agents: Agents,
        servers: Callable[[], Collection[str]],
        modes: Callable[[], Collection[str]],
    ) -> None:
        self._settings = settings
        self._file: Path = settings.writable_config_file
        self._raw: list[dict[str, Any]] = [dict(entry) for entry in settings.agents]
        self.agents = agents
        self._servers = servers
        self._modes = modes
        self._lock = threading.Lock()  # the read-modify-write of the config file

    def create(self, config: AgentConfig) -> Agents:
        """Add an agent (Conflict if its id is taken, ConfigError if it does not validate)."""
        if any(a.id == config.id for a in self.agents.list()) or any(e.get("id") == config.id for e in self._raw):
            raise Conflict(f"an agent {config.id!r} exists already; edit it instead")
        return self._apply([*self._raw, _entry(config)])

    def update(self, agent_id: str, config: AgentConfig) -> Agents:
        """Replace an agent's settings (UnknownAgent if there is none; `main` may be edited too)."""
        if config.id != agent_id:
            raise Conflict(f"the body's id {config.id!r} is not the agent's id {agent_id!r}")
        self.agents.get(agent_id)
        entries = [e for e in self._raw if e.get("id") != agent_id]
        index = next((i for i, e in enumerate(self._raw) if e.get("id") == agent_id), len(entries))
        entries.insert(index, _entry(config))
        return self._apply(entries)

    def _apply(self, entries: list[dict[str, Any]]) -> Agents:
        trial = self._settings.model_copy(update={"agents": entries})
        fresh = Agents.from_settings(trial, servers=self._servers(), modes=self._modes())
        with self._lock:
            update_config_file(
                self._file, lambda data: data.__setitem__("agents", entries), trust=self._settings.trust_store
            )
            self._raw = entries
            self.agents.replace(fresh)
        return self.agents


def _entry(config: AgentConfig) -> dict[str, Any]:
    """The YAML entry: only what was given, so defaults stay defaults in the file."""
    entry = config.model_dump(exclude_none=True, exclude_defaults=True)
    entry["id"] = config.id
    return entry

