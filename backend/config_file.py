"""The config file: where it is found (and whether a workspace's may be read), reading it with
`${VAR}` expanded, and writing changes back (always-allow rules, admins' edits) atomically."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from backend.domain.errors import Invalid
from backend.paths import private_dir, private_opener
from backend.workspace_trust import Trustable, TrustStore, config_file

CONFIG_FILE_NAME = "overseer.yaml"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(Invalid):
    """The configuration cannot be used; the message says where and why."""


@dataclass(kw_only=True)
class FoundConfig:
    """The config file in use and its text, read once: what was trusted is what is parsed."""

    path: Path
    text: str


def default_data_dir() -> Path:
    """`$OVERSEER_DATA_DIR`, else `~/.overseer`: the data dir as known before any config is read."""
    return Path(os.environ.get("OVERSEER_DATA_DIR", str(Path.home() / ".overseer"))).expanduser()


def find_config_file(data_dir: Path | None = None) -> FoundConfig | None:
    """`$OVERSEER_CONFIG`, else `./overseer.yaml` if a person trusted it, else `<data dir>/overseer.yaml`.

    The first and last are the admin's (named on purpose, or kept in the data dir) and read as they
    are. `./overseer.yaml` is the workspace's, which the agent may have written: new or changed
    since a person trusted it (`overseer trust`), it is skipped with a warning naming it.
    """
    explicit = os.environ.get("OVERSEER_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"OVERSEER_CONFIG points at {path}, which is not a file")
        return FoundConfig(path=path, text=_text_of(path.read_bytes(), path))
    data_dir = (data_dir or default_data_dir()).expanduser()
    admin = data_dir / CONFIG_FILE_NAME
    workspace = workspace_config(Path.cwd(), data_dir)
    if workspace is not None:
        trust = TrustStore.in_data_dir(data_dir)
        if trust.is_trusted(workspace):
            path = Path.cwd() / CONFIG_FILE_NAME
            return FoundConfig(path=path, text=_text_of(workspace.content, path))
        instead = admin if admin.is_file() else "the environment and defaults"
        trust.warn_once(workspace, consequence=f"it was not loaded (settings come from {instead})", trust_in=Path.cwd())
    if admin.is_file():
        return FoundConfig(path=admin, text=_text_of(admin.read_bytes(), admin))
    return None


def workspace_config(folder: Path, data_dir: Path) -> Trustable | None:
    """`<folder>/overseer.yaml` as trust sees it (content and hash); None when there is none, or it
    is the data dir's own (the admin's, read without trust)."""
    candidate = folder / CONFIG_FILE_NAME
    if not candidate.is_file() or candidate.resolve() == (data_dir.expanduser() / CONFIG_FILE_NAME).resolve():
        return None
    return config_file(candidate)


def _text_of(content: bytes, path: Path) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def expand_vars(text: str, *, source: str) -> str:
    """Replace `${VAR}` / `${VAR:-default}`; an unset variable without default is an error."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is None:
            if default is None:
                raise ConfigError(f"{source}: ${{{name}}} is not set in the environment")
            return default
        return value

    return _VAR.sub(replace, text)


def read_yaml(path: Path) -> dict[str, Any]:
    """Parse one config file with variables expanded; a clear error for anything malformed."""
    return parse_yaml(path.read_text(encoding="utf-8"), source=str(path))


def parse_yaml(text: str, *, source: str) -> dict[str, Any]:
    """Parse a config file's text with variables expanded; `source` names it in errors."""
    try:
        data = yaml.safe_load(expand_vars(text, source=source)) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def update_config_file(
    path: Path, change: Callable[[dict[str, Any]], None], *, trust: TrustStore | None = None
) -> None:
    """Apply `change` to a config file's raw mapping and write it back atomically.

    The file is read without expanding ${VAR}: it must keep its references, not the secrets.
    With `trust`, a workspace config a person trusted stays trusted: the host writes it on a
    person's authority (an "always allow" answer, an admin's change), so its new hash is recorded.
    """
    before = path.read_bytes() if path.is_file() else b""
    data: dict[str, Any] = yaml.safe_load(before.decode("utf-8")) or {}
    change(data)
    after = yaml.safe_dump(data, sort_keys=False)
    private_dir(path.parent)
    tmp = path.with_suffix(".yaml.tmp")
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as out:  # it may hold API keys
        out.write(after)
    os.replace(tmp, path)
    if trust is not None:
        trust.keep_trust(path, before=before, after=after.encode("utf-8"))


def append_allow_rules(path: Path, rules: list[str], *, trust: TrustStore | None = None) -> None:
    """Persist "always allow" rules into `permissions.allow` of a config file, creating it if needed
    (`trust`: as for update_config_file)."""

    def add(data: dict[str, Any]) -> None:
        permissions = data.get("permissions") or {}
        allow = permissions.get("allow") or []
        allow.extend(r for r in rules if r not in allow)
        permissions["allow"] = allow
        data["permissions"] = permissions

    update_config_file(path, add, trust=trust)
