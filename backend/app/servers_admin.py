"""Managing MCP servers while Overseer runs: the dashboard's add, edit, disable, remove and restart.

A change is validated as the config file would be (through McpServerConfig, so whatever server
types it knows are accepted the same way), written to the config file in use, and only then
applied to the running pool: what runs is what the next start reads. Built-in servers are
Overseer's: they can be restarted here, never replaced, edited or removed, and their names stay
refused for a person's server as in the config file. A server the managed policy's
`allowed_mcp_servers` does not admit is listed, stopped, with the reason, and cannot be added or
started here (403).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from pydantic import TypeAdapter, ValidationError

from backend.app.managed_policy import LockedByManagedPolicy, server_refusal
from backend.app.servers import ServerFeed
from backend.app.servers_file import raw_servers, read_raw, write_server_entry
from backend.config import ConfigError, Settings, expand_vars
from backend.domain.errors import BadRequest, Conflict, Invalid, NotFound
from backend.domain.redact import redact
from backend.mcp.config import BUILTIN_SERVERS, McpServerConfig, check_not_builtin, check_server_name
from backend.mcp.pool import McpPool, ServerStatus
from backend.rules.managed import NO_MANAGED_POLICY, ManagedPolicy
from backend.sandbox.launcher import SandboxStatus
from backend.sandbox.servers import confinement_text

log = logging.getLogger(__name__)

HIDDEN = "********"
"""Stands in for a literal value of `env` or `headers` in an entry read back: it may be a token.
Sent back unchanged in an edit, it means "keep what is there"."""
LOG_TAIL_BYTES = 64 * 1024
_CONFIG = TypeAdapter(McpServerConfig)


@dataclass(kw_only=True)
class ManagedServer:
    """A server as the Servers page shows it: its live status and what may be done with it."""

    status: ServerStatus
    config: McpServerConfig | None
    builtin: bool
    enabled: bool
    editable: bool
    """A person's own server from the config file: it may be edited, disabled and removed."""


class ServerAdmin:
    """Lists every server with its status and changes the person's servers at run time."""

    def __init__(
        self, *, settings: Settings, pool: McpPool, sandbox: SandboxStatus, managed: ManagedPolicy = NO_MANAGED_POLICY
    ) -> None:
        """`sandbox`: what confines commands here, for each server's confinement sentence;
        `managed`: the managed policy, whose server allow-list this honours."""
        self._managed_policy = managed
        self._pool = pool
        self._sandbox = sandbox
        self._config_file: Path = settings.writable_config_file
        self._trust = settings.trust_store  # a trusted workspace config stays trusted through our writes
        self._configs: dict[str, McpServerConfig] = dict(settings.mcp_servers)
        self._entries = _initial_entries(self._config_file, self._configs)
        self.feed = ServerFeed(pool)
        # One change at a time, so the file and the pool move in step.
        self._lock = asyncio.Lock()

    def servers(self) -> list[ManagedServer]:
        """Every server in the pool, then the configured ones switched off, in configuration order."""
        found = [self._managed(status) for status in self._pool.statuses()]
        running = {server.status.name for server in found}
        for name, config in self._configs.items():
            if name not in running and config.disabled:
                off = ServerStatus(
                    name=name, state="stopped", error="disabled in the configuration", tools=[], pid=None, restarts=0
                )
                found.append(self._managed(off))
            elif name not in running and (why := server_refusal(self._managed_policy, name, config)) is not None:
                kept_out = ServerStatus(name=name, state="stopped", error=why, tools=[], pid=None, restarts=0)
                found.append(self._managed(kept_out))
        return found

    def states(self) -> dict[str, str]:
        """Each running server's state by name (starting, ready, failed, ...), for the health check."""
        return {status.name: status.state for status in self._pool.statuses()}

    def confinement(self, server: ManagedServer) -> str:
        """What confines the server, in a sentence for the Servers page."""
        entry = server.config.sandbox if server.config is not None else None
        return confinement_text(server.status.name, entry, self._sandbox, builtin=server.builtin)

    def server(self, name: str) -> ManagedServer:
        for server in self.servers():
            if server.status.name == name:
                return server
        raise NotFound(f"no MCP server named {name!r}")

    def entry(self, name: str) -> dict[str, Any]:
        """A person's server as the config file has it, with literal env and header values hidden."""
        self._editable(name)
        return _hide(self._entries[name])

    async def add(self, name: str, entry: Mapping[str, Any]) -> ManagedServer:
        """Add a server to the config file and start it (unless the entry says `disabled`)."""
        async with self._lock:
            entry = _reveal(entry, {})  # nothing is stored yet: a hidden value is a mistake
            config = validate_entry(name, entry)  # first: a built-in's name gets its own answer
            self._admitted(name, config)
            if name in self._configs or self._pool.config_of(name) is not None:
                raise Conflict(f"an MCP server named {name!r} exists already; edit it instead")
            self._write(name, entry)
            self._configs[name], self._entries[name] = config, entry
            if not config.disabled:
                await self._pool.add_server(name, config)
        self.feed.changed(name)
        return self.server(name)

    async def update(self, name: str, entry: Mapping[str, Any]) -> ManagedServer:
        """Replace a server's entry; a running server restarts with it, a disabled one stops."""
        async with self._lock:
            self._editable(name)
            entry = _reveal(entry, self._entries[name])
            config = validate_entry(name, entry)
            self._admitted(name, config)
            self._write(name, entry)
            self._configs[name], self._entries[name] = config, entry
            await self._apply(name, config)
        self.feed.changed(name)
        return self.server(name)

    async def set_enabled(self, name: str, enabled: bool) -> ManagedServer:
        """Switch a person's server on or off (`disabled` in its entry)."""
        entry = {key: value for key, value in self._entry_of(name).items() if key != "disabled"}
        if not enabled:
            entry["disabled"] = True
        return await self.update(name, entry)

    async def remove(self, name: str) -> None:
        """Take a server out of the config file and stop it."""
        async with self._lock:
            self._editable(name)
            self._write(name, None)
            del self._configs[name], self._entries[name]
            if self._pool.config_of(name) is not None:
                await self._pool.remove_server(name)
        self.feed.changed(name)

    async def restart(self, name: str, *, by: str) -> ManagedServer:
        """Restart a running server (a built-in too), as it is configured."""
        async with self._lock:
            if self._pool.config_of(name) is None:
                if name in self._configs:
                    raise Conflict(f"MCP server {name!r} is disabled; enable it to start it")
                raise NotFound(f"no MCP server named {name!r}")
            await self._pool.restart_server(name, reason=f"was restarted by {by}")
        return self.server(name)

    async def log_tail(self, name: str, *, lines: int) -> list[str]:
        """The last `lines` lines the server wrote to its log (stderr and the pool's markers)."""
        self.server(name)  # a NotFound for a name that is no server
        path = self._pool.log_path(name)
        text = await anyio.to_thread.run_sync(_tail, path)
        return redact(text).splitlines()[-lines:]

    def _managed(self, status: ServerStatus) -> ManagedServer:
        name = status.name
        builtin = name in BUILTIN_SERVERS
        config = self._pool.config_of(name) or self._configs.get(name)
        return ManagedServer(
            status=status,
            config=config,
            builtin=builtin,
            enabled=config is not None and not config.disabled,
            editable=not builtin and name in self._entries,
        )

    def _admitted(self, name: str, config: McpServerConfig) -> None:
        """LockedByManagedPolicy for a server to be started that the managed allow-list does not admit."""
        if not config.disabled and (why := server_refusal(self._managed_policy, name, config)) is not None:
            raise LockedByManagedPolicy(why)

    def _editable(self, name: str) -> None:
        if name in BUILTIN_SERVERS:
            raise BadRequest(
                f"{name!r} is one of Overseer's built-in servers: it can be restarted here, not changed; "
                f"to switch it off, write `{name}: {{disabled: true}}` under mcpServers in {self._config_file}"
            )
        if name not in self._entries:
            if self._pool.config_of(name) is not None:
                raise BadRequest(f"MCP server {name!r} is not in the config file, so it cannot be changed here")
            raise NotFound(f"no MCP server named {name!r}")

    def _entry_of(self, name: str) -> dict[str, Any]:
        self._editable(name)
        return dict(self._entries[name])

    def _write(self, name: str, entry: dict[str, Any] | None) -> None:
        try:
            write_server_entry(self._config_file, name, entry, trust=self._trust)
        except ConfigError as exc:
            raise Conflict(f"the config file cannot be changed: {exc}") from exc
        log.info("MCP server %r %s in %s", name, "removed" if entry is None else "written", self._config_file)

    async def _apply(self, name: str, config: McpServerConfig) -> None:
        running = self._pool.config_of(name) is not None
        if config.disabled:
            if running:
                await self._pool.remove_server(name)
        elif running:
            await self._pool.restart_server(name, config)
        else:
            await self._pool.add_server(name, config)


def validate_entry(name: str, entry: Mapping[str, Any]) -> McpServerConfig:
    """Check a server entry as the config file's loader would; Invalid names the bad field."""
    try:
        check_server_name(name)
    except ValueError as exc:
        raise Invalid(f"name: {exc}") from None
    where = f"mcpServers.{name}"
    try:
        # A remote server's headers keep their ${VAR}: the config reads them when it connects
        # (McpServerConfig.resolved_headers, which refuses an unset one), so no token is held.
        expanded = {key: value if key == "headers" else _expand(value, f"{where}.{key}") for key, value in entry.items()}
        config = _CONFIG.validate_python(expanded)
    except ConfigError as exc:
        raise Invalid(str(exc)) from None
    except ValidationError as exc:
        raise Invalid("; ".join(_problem(where, err) for err in exc.errors())) from None
    if name in BUILTIN_SERVERS:
        # Even switched off: from here a built-in's name would only ever shadow it.
        try:
            check_not_builtin(name, config.model_copy(update={"disabled": False}))
        except ValueError as exc:
            raise Invalid(f"name: {exc}") from None
    return config


def _problem(where: str, err: Any) -> str:
    loc = ".".join(str(part) for part in err.get("loc", ()))
    return f"{where}.{loc}: {err.get('msg', 'invalid')}" if loc else f"{where}: {err.get('msg', 'invalid')}"


def _expand(value: Any, where: str) -> Any:
    """`${VAR}` expanded in every string, as the config file's loader does; errors say where."""
    if isinstance(value, str):
        return expand_vars(value, source=where)
    if isinstance(value, dict):
        return {key: _expand(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item, f"{where}.{index}") for index, item in enumerate(value)]
    return value


def _hide(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Literal values of mapping fields (env, headers) hidden; `${VAR}` references shown."""
    shown: dict[str, Any] = {}
    for key, value in entry.items():
        if isinstance(value, dict):
            value = {k: v if isinstance(v, str) and "${" in v else HIDDEN for k, v in value.items()}
        shown[key] = value
    return shown


def _reveal(entry: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """An edited entry with each value still HIDDEN put back from the stored entry."""
    revealed: dict[str, Any] = {}
    for key, value in entry.items():
        if isinstance(value, dict):
            kept = stored.get(key)
            before: dict[str, Any] = kept if isinstance(kept, dict) else {}
            value = dict(value)
            for item, text in value.items():
                if text == HIDDEN:
                    if item not in before:
                        raise Invalid(f"{key}.{item}: its value is hidden here; type the value")
                    value[item] = before[item]
        revealed[key] = value
    return revealed


def _initial_entries(path: Path, configs: Mapping[str, McpServerConfig]) -> dict[str, dict[str, Any]]:
    """The person's server entries as written (references unexpanded) where the file has them;
    a server configured elsewhere (the environment) is described by its validated config."""
    try:
        written = raw_servers(read_raw(path))
    except ConfigError:
        log.warning("cannot read %s; servers configured there show as configured elsewhere", path)
        written = {}
    entries: dict[str, dict[str, Any]] = {}
    for name, config in configs.items():
        raw = written.get(name)
        entries[name] = dict(raw) if isinstance(raw, dict) else config.model_dump(mode="json", exclude_defaults=True)
    return entries


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - LOG_TAIL_BYTES))
            return f.read().decode(errors="replace")
    except OSError:
        return ""
