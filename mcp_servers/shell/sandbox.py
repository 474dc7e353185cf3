"""The sandbox the host puts each command in, read from the call's `_meta`.

The host works out, per call, what the command may see (its session's workspace, the system
read-only, nothing else) and sends the command prefix that enforces it (bubblewrap or Landlock)
in `_meta["overseer/sandbox"]`. A server the host launched runs nothing without one: a missing
sandbox is a fault of the host, not a reason to run unconfined. A standalone server (Claude
Desktop and the like) has no host and runs commands as its client's own approvals allow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

SANDBOX_META_KEY = "overseer/sandbox"
READ_ONLY_HINT = (
    "[sandbox: this command runs confined. Instruction files (AGENTS.md, SOUL.md, memory/MEMORY.md, "
    "overseer.yaml, .overseer/) and paths that deny rules protect are read-only to every program; "
    "change them with the file tools (write_file, edit_file), which ask a person.]"
)
NO_NETWORK_HINT = (
    "[sandbox: commands have no network unless the host's egress proxy is set up for this agent "
    "(sandbox.network.allow); then hosts off the allowlist ask a person.]"
)


@dataclass(frozen=True, kw_only=True)
class CommandSandbox:
    """How one command is started: the prefix that confines it, or none when an admin said so."""

    wrap: tuple[str, ...]
    backend: str
    """`bwrap`, `landlock`, `off` (an admin turned it off) or `standalone`."""


STANDALONE = CommandSandbox(wrap=(), backend="standalone")


def command_sandbox(meta: Mapping[str, Any] | None, *, trust_meta: bool) -> CommandSandbox:
    """The sandbox for one call; a host-launched server refuses a call that names none."""
    if not trust_meta:
        return STANDALONE
    raw = (meta or {}).get(SANDBOX_META_KEY)
    if not isinstance(raw, Mapping):
        raise ToolError("refused: the host sent no sandbox for this command, so it was not run")
    if raw.get("unconfined") is True:
        return CommandSandbox(wrap=(), backend="off")
    argv = raw.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise ToolError(f"refused: _meta {SANDBOX_META_KEY!r} has no usable 'argv', so the command was not run")
    return CommandSandbox(wrap=tuple(argv), backend=str(raw.get("backend") or "sandbox"))


def hints(sandbox: CommandSandbox, output: bytes) -> list[str]:
    """Notes for the model when a failure came from the sandbox rather than the command."""
    if not sandbox.wrap:
        return []
    found: list[str] = []
    if b"Read-only file system" in output:
        found.append(READ_ONLY_HINT)
    if any(s in output for s in (b"Temporary failure in name resolution", b"Could not resolve host", b"Network is unreachable")):
        found.append(NO_NETWORK_HINT)
    return found
