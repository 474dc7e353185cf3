"""Writing one `mcpServers` entry into a person's YAML config file, leaving the rest as they wrote it.

A full YAML round trip (load, change, dump) would drop every comment and reorder nothing but
reformat everything. So the file is edited as text: only the lines of the one server's entry are
replaced, inserted or removed. The result is parsed and compared with what the change means; if
the file is laid out in a way this editor does not follow (flow style, anchors, odd indentation),
the whole file is rewritten from its data instead: correct, but without its comments.
"""

from __future__ import annotations

import copy
import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml

from backend.config import ConfigError
from backend.paths import private_dir, private_opener
from backend.workspace_trust import TrustStore

log = logging.getLogger(__name__)

SERVERS_KEYS = ("mcpServers", "mcp_servers")
"""How the file may name the servers' section (Settings accepts both)."""
_DEFAULT_INDENT = "  "


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
    """Set `mcpServers.<name>` to `entry` (None: remove it) in the config file at `path`.

    With `trust`, a workspace config a person trusted stays trusted (an admin made this change).
    """
    before = path.read_bytes() if path.is_file() else b""
    # Read once, with the newlines read_text would give: the trust check and the edit see the same text.
    text = before.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    data = _raw_of(text, path) if before else {}
    key = servers_key(data)
    expected = copy.deepcopy(data)
    servers = dict(raw_servers(expected))
    if entry is None:
        servers.pop(name, None)
    else:
        servers[name] = entry
    expected[key] = servers
    edited = _edit(text, key, name, entry)
    if edited is None or not _means(edited, expected, key):
        log.info("%s: rewriting the whole file to change MCP server %r (its comments are not kept)", path, name)
        edited = yaml.safe_dump(expected, sort_keys=False, allow_unicode=True)
    private_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as out:  # it may hold tokens
        out.write(edited)
    os.replace(tmp, path)
    if trust is not None:
        trust.keep_trust(path, before=before, after=edited.encode("utf-8"))


def _means(text: str, expected: dict[str, Any], key: str) -> bool:
    """Whether `text` parses to `expected` (an empty servers section may be written as `{}`)."""
    try:
        parsed = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return False
    return isinstance(parsed, dict) and parsed == expected and isinstance(parsed.get(key), dict)


_KEY_LINE = r"^(?P<indent>{indent})(?P<q>[\"']?){name}(?P=q)\s*:(?P<rest>.*)$"


def _key_line(indent: str, name: str) -> re.Pattern[str]:
    return re.compile(_KEY_LINE.format(indent=indent, name=re.escape(name)))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: list[str], start: int, parent_indent: int) -> int:
    """The index after the last content line below `start` indented deeper than `parent_indent`.

    Comments and blank lines after it belong to what follows, so they stay where they are.
    """
    end = start + 1
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not _is_content(line):
            continue
        if _indent_of(line) <= parent_indent:
            break
        end = index + 1
    return end


def _dump_entry(name: str, entry: dict[str, Any], indent: str) -> list[str]:
    dumped = yaml.safe_dump({name: entry}, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return [indent + line + "\n" for line in dumped.splitlines()]


def _edit(text: str, key: str, name: str, entry: dict[str, Any] | None) -> str | None:
    """The file with the one entry changed, or None where the layout is not one this follows."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    section = next((i for i, line in enumerate(lines) if _key_line("", key).match(line)), None)
    if section is None:
        if entry is None:
            return text
        return "".join(lines) + f"{key}:\n" + "".join(_dump_entry(name, entry, _DEFAULT_INDENT))
    rest = _key_line("", key).match(lines[section])
    assert rest is not None
    after_colon = rest.group("rest").strip()
    if after_colon and not after_colon.startswith("#") and after_colon != "{}":
        return None  # flow style or an anchor: rewrite instead
    section_end = _block_end(lines, section, 0)
    children = [line for line in lines[section + 1 : section_end] if _is_content(line)]
    indent = " " * _indent_of(children[0]) if children else _DEFAULT_INDENT
    if any(_indent_of(line) < len(indent) for line in children):
        return None
    if after_colon == "{}" and entry is not None:
        lines[section] = f"{key}:\n"
    found = next(
        (i for i in range(section + 1, section_end) if _key_line(indent, name).match(lines[i])), None
    )
    if found is None:
        if entry is None:
            return "".join(lines)
        lines[section_end:section_end] = _dump_entry(name, entry, indent)
        return "".join(lines)
    found_end = _block_end(lines, found, len(indent))
    lines[found:found_end] = [] if entry is None else _dump_entry(name, entry, indent)
    if _block_end(lines, section, 0) == section + 1:
        lines[section] = f"{key}: {{}}\n"  # the last server went: an empty mapping, not null
    return "".join(lines)
