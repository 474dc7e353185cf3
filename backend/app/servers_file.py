"""Writing one `mcpServers` entry into a person's YAML config file, leaving the rest as they wrote
it (update_config_file round-trips the file: comments, order and quoting stay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from backend.config import ConfigError, update_config_file
from backend.workspace_trust import TrustStore

SERVERS_KEYS = ("mcpServers", "mcp_servers")
"""How the file may name the servers' section (Settings accepts both)."""


def read_raw(path: Path) -> dict[str, Any]:
    """The file's mapping as written (no `${VAR}` expanded), or {} when there is no file."""
    if not path.is_file():
        return {}
    return _raw_of(path.read_text(encoding="utf-8"), path)


def _raw_of(text: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def servers_key(data: dict[str, Any]) -> str:
    """The key the file uses for its servers (`mcpServers` unless it already says `mcp_servers`)."""
    return next((key for key in SERVERS_KEYS if key in data), SERVERS_KEYS[0])


def raw_servers(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get(servers_key(data))
    return servers if isinstance(servers, dict) else {}


def write_server_entry(
    path: Path, name: str, entry: dict[str, Any] | None, *, trust: TrustStore | None = None
) -> None:
    """Set `mcpServers.<name>` to `entry` (None: remove it) in the config file at `path`, through
    the config file's one round-tripping writer: the rest of the file stays as it was written.

    With `trust`, a workspace config a person trusted stays trusted (an admin made this change).
    """

    def change(data: dict[str, Any]) -> None:
        key = servers_key(data)
        servers = dict(raw_servers(data))
        if entry is None:
            servers.pop(name, None)
        else:
            servers[name] = entry
        data[key] = servers

    update_config_file(path, change, trust=trust)
