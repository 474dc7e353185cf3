"""Third-party stdio MCP servers in the sandbox: `sandbox:` in a server's config entry.

A server is shared by every session, so its sandbox is made once, when it starts, from its own
entry: the folders it may write, those it may read, and whether it gets any network. What it
runs from (its command's install folder) is readable; everything else of the host is not there.

    mcpServers:
      notes:
        command: npx
        args: [-y, some-notes-server]
        sandbox: {writable: [~/notes], read_only: [~/.npm]}

Network: none, unless `network: true` (then the server shares the host's network: the egress
proxy asks about a command's connections in its session, and a server has no session to ask in).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from backend.sandbox.bwrap import bwrap_argv
from backend.sandbox.launcher import SandboxStatus, SandboxUnavailable
from backend.sandbox.profile import SandboxProfile


class ServerSandbox(BaseModel):
    """What a confined stdio server may touch."""

    model_config = ConfigDict(extra="forbid")
    writable: list[str] = Field(default_factory=list)
    """Folders it may change; the first is its working directory (default: a private folder)."""
    read_only: list[str] = Field(default_factory=list)
    """Folders it may read (its own install folder is added)."""
    network: bool = False
    """Whether it keeps the host's network (true) or has none at all (false, the default)."""


def server_argv(
    status: SandboxStatus, sandbox: ServerSandbox, command: str, args: list[str], *, home: Path
) -> list[str]:
    """The server's command line, confined. `home`: its private folder when it names no writable one.

    Raises SandboxUnavailable when no backend can confine it (the server is then not started).
    """
    if status.backend != "bwrap" or status.program is None:
        raise SandboxUnavailable(
            f"this server asks for a sandbox, and only bubblewrap confines servers ({status.summary()})"
        )
    writable = [Path(os.path.expanduser(p)).resolve() for p in sandbox.writable]
    if not writable:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        writable = [home.resolve()]
    read_only = [Path(os.path.expanduser(p)).resolve() for p in sandbox.read_only]
    read_only += _install_folder(command)
    profile = SandboxProfile(workspace=writable[0], writable=tuple(writable[1:]), read_only=tuple(read_only))
    prefix = bwrap_argv(status.program, profile)
    if sandbox.network:
        prefix.remove("--unshare-net")
    return [*prefix, command, *args]


def _install_folder(command: str) -> list[Path]:
    """The folder a command runs from (`.../bin/node` -> `...`), when it lies outside /usr."""
    found = shutil.which(command)
    if found is None:
        return []
    real = Path(os.path.realpath(found))
    folder = real.parent.parent if real.parent.name == "bin" else real.parent
    return [] if str(folder).startswith(("/usr", "/bin", "/sbin", "/lib")) or folder == Path("/") else [folder]


BUILTIN_CONFINEMENT = {
    "shell": "every command in its session's sandbox: the workspace read-write, the system read-only, "
    "nothing else, no network but the egress proxy",
    "file": "the server keeps every path inside the session's workspace and the read roots (no kernel sandbox)",
    "memory": "the server keeps its files inside the session's workspace (no kernel sandbox)",
}


def confinement_text(name: str, sandbox: ServerSandbox | None, status: SandboxStatus, *, builtin: bool) -> str:
    """For the Servers page: what confines this server, in a sentence."""
    if builtin:
        text = BUILTIN_CONFINEMENT.get(name, "Overseer's own server, unconfined (it runs as your user)")
        if name == "shell" and not status.confined:
            return status.summary()
        return text
    if sandbox is None:
        return "unconfined: it runs as your user and can reach what you can (add `sandbox:` to its entry)"
    writes = ", ".join(sandbox.writable) or "a private folder of its own"
    reads = ", ".join(sandbox.read_only) or "nothing more"
    network = "the host's network" if sandbox.network else "no network"
    return f"sandboxed: writes {writes}; also reads {reads} and the system; {network}"
