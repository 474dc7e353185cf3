"""The config file: where it is found (and whether a workspace's may be read), reading it with
`${VAR}` expanded, and writing changes back (always-allow rules, admins' edits) atomically."""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML, YAMLError
from ruamel.yaml.comments import CommentedMap

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
    """Apply `change` to a config file's raw mapping and write it back atomically: the one writer
    of the config file (agents, rules, policies, servers).

    The file is read without expanding ${VAR}: it must keep its references, not the secrets. It is
    round-tripped (ruamel.yaml): `change` gets plain data, and only what it changed is written anew;
    every untouched value keeps its comments, order, quoting and spelling (`0.50` stays `0.50`).
    The file's mode is kept (a new file is owner-only: it may hold API keys).
    With `trust`, a workspace config a person trusted stays trusted: the host writes it on a
    person's authority (an "always allow" answer, an admin's change), so its new hash is recorded.
    """
    before = path.read_bytes() if path.is_file() else b""
    yaml_rt, document = _round_trip(_text_of(before, path), path)
    data = _plain(document)
    change(data)
    _merge(document, data)
    out = io.StringIO()
    yaml_rt.dump(document, out)
    after = out.getvalue()
    private_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as handle:
        handle.write(after)
    if before:
        os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
    os.replace(tmp, path)
    if trust is not None:
        trust.keep_trust(path, before=before, after=after.encode("utf-8"))


def _round_trip(text: str, path: Path) -> tuple[YAML, CommentedMap]:
    """A round-trip loader/dumper set to the file's own indentation, and the file's document."""
    yaml_rt = YAML(typ="rt")
    yaml_rt.preserve_quotes = True
    yaml_rt.width = 4096  # never re-wrap a long value
    mapping, offset = _indentation(text)
    yaml_rt.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    try:
        document = yaml_rt.load(text) if text.strip() else None
    except YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if document is None:
        document = CommentedMap()
    if not isinstance(document, CommentedMap):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(document).__name__}")
    return yaml_rt, document


_OPENS_BLOCK = re.compile(r"^(?:- )?[^#]*:\s*(?:#.*)?$")


def _indentation(text: str) -> tuple[int, int]:
    """How the file indents a nested mapping and where it puts a sequence's dash (as its first
    nested block does; 2 and 2 for a new file), so a write does not re-indent the file."""
    mapping: int | None = None
    offset: int | None = None
    parent: int | None = None  # the indent of the last line that opened a block
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if parent is not None and indent >= parent:
            if stripped.startswith("-") and offset is None:
                offset = indent - parent
            elif not stripped.startswith("-") and indent > parent and mapping is None:
                mapping = indent - parent
        parent = indent if _OPENS_BLOCK.match(stripped) and not stripped.startswith("- ") else None
    return mapping or 2, 2 if offset is None else offset


def _plain(node: Any) -> Any:
    """A round-tripped node as plain dicts, lists and scalars (what a change works on)."""
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, str):
        return str(node)
    return node


def _same(old: Any, new: Any) -> bool:
    """Whether two values mean the same (True is not 1 here)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return False
    return isinstance(old, bool) == isinstance(new, bool) and (old is None) == (new is None) and old == new


def _merge(old: Any, new: Any) -> Any:
    """`new` written into `old` in place where both are containers; what did not change keeps its node."""
    if _same(old, new):
        return old
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [k for k in old if k not in new]:
            del old[key]
        for key, value in new.items():
            if key not in old:
                old[key] = value
                continue
            merged = _merge(old[key], value)
            if merged is not old[key]:
                old[key] = merged
        return old
    if isinstance(old, list) and isinstance(new, list):
        unused = list(old)
        result = []
        for index, value in enumerate(new):
            kept = next((node for node in unused if _same(node, value)), None)
            if (
                kept is None
                and index < len(old)
                and any(node is old[index] for node in unused)
                and not any(_same(old[index], v) for v in new)
            ):
                kept = _merge(old[index], value)  # the element changed in place
            if kept is None:
                kept = value
            else:
                unused = [node for node in unused if node is not kept]
            result.append(kept)
        for index, value in enumerate(result):
            if index < len(old):
                if old[index] is not value:
                    old[index] = value
            else:
                old.append(value)
        del old[len(result) :]
        return old
    return new


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
