"""Named agents (issue 19): each has its own workspace, model, default mode, servers and rules.

`agents:` in overseer.yaml lists them. Without it there is one agent, `main`, exactly as before:
the configured workspace, model and mode, every server, the global rules. `main` always exists;
listed without a workspace it keeps the configured one, so adding agents moves nothing of it.
Another agent's workspace defaults to `<data dir>/agents/<id>/workspace`.

An agent's memory, bootstrap files and skills folder are those of its workspace: the prompt
builder reads them from the session's workspace, and the file and shell servers are confined to
it per call. Its `permissions` are added to the global rules (deny still wins); its `servers`
limit what its sessions are offered, and the gate refuses any tool not offered.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from backend.sandbox.config import AgentSandbox
from backend.config import ConfigError, PermissionsConfig, Settings
from backend.domain.errors import NotFound
from backend.rules.agent_fence import DEFAULT_FOLDER
from backend.rules.grammar import RuleError, RuleSet
from backend.routing import MAIN, Route

AGENTS_FOLDER = "agents"
"""Under the data dir: a folder per agent, holding its default workspace."""
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class UnknownAgent(NotFound):
    """No agent of that id is configured."""


class AgentConfig(BaseModel):
    """One entry of `agents:`, as written in overseer.yaml and sent by the API."""

    model_config = ConfigDict(extra="forbid")
    id: str
    name: str | None = None
    workspace: str | None = None
    """Its folder (`~` expanded); default `<data dir>/agents/<id>/workspace` (main: the configured one)."""
    model: str | None = None
    """Its sessions' model; default the configured one."""
    mode: str | None = None
    """Its sessions' mode when they name none; default `agent`."""
    servers: list[str] | None = None
    """The configured MCP servers it may use; default all."""
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    """Rules added to the global ones for its sessions; deny still wins."""
    sandbox: AgentSandbox | None = None
    """Its commands' network allowlist (added to the host's) and `auto_allow`."""

    @field_validator("id")
    @classmethod
    def _id_is_a_slug(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"{value!r}: an agent id is lowercase letters, digits, - and _ (at most 40)")
        return value


@dataclass(kw_only=True)
class Agent:
    """An agent as its sessions use it, resolved against the settings."""

    id: str
    name: str
    workspace: Path
    model: str | None = None
    mode: str | None = None
    servers: frozenset[str] | None = None
    """None: every configured server."""
    rules: RuleSet | None = None
    """Its own rules, added to the global ones; None when it has none."""
    config: AgentConfig

    def offers_server(self, server: str) -> bool:
        """Whether its sessions may see and call the tools of `server`."""
        return self.servers is None or server in self.servers


class Agents:
    """The configured agents by id, with `main` always among them."""

    def __init__(self, agents: Iterable[Agent], routes: Iterable[Route] = ()) -> None:
        self._by_id = {agent.id: agent for agent in agents}
        self.routes = list(routes)
        if MAIN not in self._by_id:
            raise ConfigError("agents: there is no `main` agent")

    @classmethod
    def from_settings(cls, settings: Settings, *, servers: Collection[str], modes: Collection[str]) -> Agents:
        """Validate `agents:` and `routes:` against the configured servers and the known modes.

        Raises ConfigError naming the entry and the fault: a duplicate id, an unknown server or
        mode, a malformed rule, a workspace that is not a folder, a route to no agent.
        """
        configs = parse_agents(settings.agents)
        if not any(c.id == MAIN for c in configs):
            configs.insert(0, AgentConfig(id=MAIN))
        agents = [resolve(c, settings, servers=servers, modes=modes) for c in configs]
        routes = parse_routes(settings.routes, {a.id for a in agents})
        return cls(agents, routes)

    def replace(self, other: Agents) -> None:
        """Take `other`'s agents and routes in place: every part holding this object sees them at once."""
        self._by_id, self.routes = dict(other._by_id), list(other.routes)

    @property
    def main(self) -> Agent:
        return self._by_id[MAIN]

    def get(self, agent_id: str | None) -> Agent:
        """The agent of that id (`main` for None); UnknownAgent names the ones there are."""
        found = self._by_id.get(agent_id or MAIN)
        if found is None:
            known = ", ".join(sorted(self._by_id))
            raise UnknownAgent(f"no agent {agent_id!r} is configured (agents: {known})")
        return found

    def list(self) -> list[Agent]:
        """Every agent, `main` first, then in the order of the config."""
        return sorted(self._by_id.values(), key=lambda a: a.id != MAIN)


def parse_agents(raw: list[dict[str, Any]]) -> list[AgentConfig]:
    """The `agents:` list as models; ConfigError for a malformed entry or a duplicate id."""
    configs: list[AgentConfig] = []
    for index, entry in enumerate(raw):
        try:
            configs.append(AgentConfig.model_validate(entry))
        except ValidationError as exc:
            raise ConfigError(_errors(f"agents[{index}]", exc)) from exc
    seen: set[str] = set()
    for config in configs:
        if config.id in seen:
            raise ConfigError(f"agents: the id {config.id!r} is used twice")
        seen.add(config.id)
    return configs


def parse_routes(raw: list[dict[str, Any]], agent_ids: Collection[str]) -> list[Route]:
    """The `routes:` list; ConfigError for a malformed route or one to no configured agent."""
    routes: list[Route] = []
    for index, entry in enumerate(raw):
        try:
            found = Route.model_validate(entry)
        except ValidationError as exc:
            raise ConfigError(_errors(f"routes[{index}]", exc)) from exc
        if found.agent not in agent_ids:
            known = ", ".join(sorted(agent_ids))
            raise ConfigError(f"routes[{index}]: no agent {found.agent!r} (agents: {known})")
        routes.append(found)
    return routes


def resolve(
    config: AgentConfig, settings: Settings, *, servers: Collection[str], modes: Collection[str]
) -> Agent:
    """One agent with its workspace made absolute (the default one created) and its rules parsed."""
    where = f"agents.{config.id}"
    unknown = [s for s in config.servers or [] if s not in servers]
    if unknown:
        known = ", ".join(sorted(servers)) or "none"
        raise ConfigError(
            f"{where}.servers: {unknown[0]!r} is not a configured MCP server (servers: {known})"
        )
    if config.mode is not None and config.mode not in modes:
        raise ConfigError(f"{where}.mode: no mode {config.mode!r} (modes: {', '.join(sorted(modes))})")
    try:
        rules = RuleSet.from_config(config.permissions.model_dump(), source=f"agent:{config.id}", strict=True)
    except RuleError as exc:
        raise ConfigError(f"{where}.permissions: {exc}") from exc
    # Claude Code's block settings (issue 35, item 11): `plan` is the agent's mode; the others hold
    # for the whole host (the managed policy checks them there), never silently for one agent.
    if config.permissions.defaultMode not in (None, "default", "plan") or config.permissions.additionalDirectories:
        raise ConfigError(
            f"{where}.permissions: defaultMode {config.permissions.defaultMode or 'default'!r} and additionalDirectories "
            "hold for the whole host: set them in the top-level permissions block (an agent may say defaultMode: plan)"
        )
    mode = config.mode or ("plan" if config.permissions.defaultMode == "plan" else None)
    if config.workspace:
        try:
            workspace = Path(config.workspace).expanduser().resolve()
            found = workspace.is_dir()
        except (OSError, ValueError, RuntimeError):  # a NUL byte, a loop of links, an unknown ~user
            found = False
        if not found:
            raise ConfigError(f"{where}.workspace: {config.workspace} is not a folder")
    elif config.id == MAIN:
        workspace = settings.resolved_workspace
    else:
        workspace = default_workspace(settings, config.id)
        workspace.mkdir(parents=True, exist_ok=True)
    has_rules = bool(rules.allow or rules.ask or rules.deny)
    return Agent(
        id=config.id,
        name=config.name or config.id,
        workspace=workspace,
        model=config.model,
        mode=mode,
        servers=frozenset(config.servers) if config.servers is not None else None,
        rules=rules if has_rules else None,
        config=config,
    )


def default_workspace(settings: Settings, agent_id: str) -> Path:
    """Where an agent that names no workspace works."""
    return (settings.data_dir.expanduser() / AGENTS_FOLDER / agent_id / DEFAULT_FOLDER).resolve()


def _errors(where: str, exc: ValidationError) -> str:
    """One line per fault, each naming its field under `where` (as load_settings does)."""
    lines = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"])
        lines.append(f"  {where}.{field}: {error['msg']}" if field else f"  {where}: {error['msg']}")
    return "invalid configuration:\n" + "\n".join(lines)
