"""What one confined command may see: a profile, made per call, that a backend turns into a launch."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

NetworkAccess = Literal["none", "proxy"]
"""`none`: no network at all (a private loopback only). `proxy`: only the host's egress proxy."""

SYSTEM_PATHS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Read-only in every sandbox: the programs, their libraries and the system's configuration."""

SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)
"""Parts of /etc that are no command's business: hidden (emptied), like a `Read` deny."""


@dataclass(frozen=True, kw_only=True)
class SandboxProfile:
    """The view of the machine one command gets.

    Paths are absolute and seen at the same place inside as outside, so what a command prints
    about a path means the same to the model and the person. Everything not named here does not
    exist inside: other workspaces, the data dir, `$HOME` (a private, empty one stands in).
    """

    workspace: Path
    """Read-write, and the working directory."""
    writable: tuple[Path, ...] = ()
    """Other read-write folders (rare: a second workspace a person added)."""
    read_only: tuple[Path, ...] = ()
    """Folders readable but never writable: read roots, toolchains a person listed."""
    hidden: tuple[Path, ...] = ()
    """Inside a visible folder but emptied: what `Read` deny rules name, the system's secrets."""
    protected: tuple[Path, ...] = ()
    """Inside a writable folder but read-only: instruction files, what `Edit` deny rules name."""
    pinned: tuple[Path, ...] = ()
    """Paths that may not exist yet whose folders must stay where they are (absent instruction files)."""
    network: NetworkAccess = "none"
    proxy_socket: Path | None = None
    """With `network="proxy"`: the host's egress proxy socket for this session."""
    home: Path | None = field(default_factory=lambda: _home())
    """Replaced by an empty private folder, so tools that keep caches there still work."""


def _home() -> Path | None:
    home = os.environ.get("HOME")
    return Path(home) if home and home != "/" else None


def covers(parent: Path, path: Path) -> bool:
    """Whether `path` is `parent` or lies inside it."""
    return path == parent or path.is_relative_to(parent)
