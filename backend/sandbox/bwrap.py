"""The bubblewrap backend: a profile as a `bwrap` command line that runs a command inside it.

Mounts are applied in order, later ones over earlier ones: the system read-only, then a private
`/tmp`, `/proc`, `/dev` and `$HOME`, then the workspace read-write, then what must be emptied
(hidden), then read roots, then what is kept read-only (protected) inside them. Every namespace is new
(user, PID, IPC, UTS, cgroup, and network unless the proxy is used, which still needs one of its
own: the bridge inside it is the only way out). `--die-with-parent` ties the sandbox's life to
the process that started it, and the PID namespace ends every process of it when its first ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from backend.sandbox.profile import SYSTEM_PATHS, SYSTEM_SECRETS, SandboxProfile, covers

PROXY_SOCKET_INSIDE = "/run/overseer/proxy.sock"
"""Where the egress proxy's socket appears inside the sandbox."""
BRIDGE_PORT = 3128
"""The port the bridge listens on inside the sandbox's own network namespace."""
_EMPTY_FILE = "/dev/null"


def bwrap_argv(
    bwrap: Path, profile: SandboxProfile, *, bridge: tuple[str, Path] | None = None
) -> list[str]:
    """The command prefix (ending in `--` or the bridge's `--`) that runs what follows confined.

    `bridge`: (python, script) of the network bridge, needed when the profile uses the proxy.
    """
    # Run as root, bwrap keeps root's capabilities unless told: then a command could unmount what
    # hides a path (`umount secrets`). With none, it cannot, nor can a user namespace it makes
    # itself, where the mounts it inherits are locked.
    args = [str(bwrap), "--unshare-user-try", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--unshare-net", "--die-with-parent", "--new-session"]
    args += _system()
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    if profile.home is not None and os.path.isdir(profile.home):
        # Empty and private; a workspace or read root inside it is mounted over it just below.
        args += ["--tmpfs", os.path.realpath(profile.home)]
    for path in (profile.workspace, *profile.writable):
        args += ["--bind", str(path), str(path)]
    # Read roots go on after the hidden paths, so one inside a hidden folder still shows.
    visible = [Path(p) for p in SYSTEM_PATHS] + [profile.workspace, *profile.writable, *profile.read_only]
    writable = [profile.workspace, *profile.writable]
    hidden = _inside(profile.hidden + tuple(Path(p) for p in SYSTEM_SECRETS), visible, writable)
    protected = _inside(profile.protected, visible, writable)
    # A folder on the way to a hidden or protected path is mounted on itself: a mount point
    # cannot be renamed (EBUSY), so `mv vault v2` cannot carry a secret to a path no rule names,
    # nor `mv memory m2 && mkdir memory` put a new MEMORY.md where the old one was.
    for folder in _ancestors([*hidden, *protected, *profile.pinned], writable):
        args += ["--bind", str(folder), str(folder)]
    emptied: list[Path] = []
    for path in hidden:
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            emptied.append(path)
        else:
            args += ["--ro-bind", _EMPTY_FILE, str(path)]
    for path in profile.read_only:
        args += ["--ro-bind-try", str(path), str(path)]
    for path in protected:
        args += ["--ro-bind", str(path), str(path)]
    for path in emptied:  # last: mount points inside them were made above
        args += ["--remount-ro", str(path)]
    args += ["--chdir", str(profile.workspace)]
    if profile.network == "proxy":
        if profile.proxy_socket is None or bridge is None:
            raise ValueError("a profile that uses the proxy needs its socket and the bridge")
        python, script = bridge
        python = os.path.realpath(python)  # a venv's python is a link to one outside the sandbox
        args += ["--dir", "/run/overseer", "--bind", str(profile.proxy_socket), PROXY_SOCKET_INSIDE]
        runtime = Path(os.path.realpath(python)).parent.parent
        args += ["--ro-bind-try", str(runtime), str(runtime), "--ro-bind", str(script), str(script)]
        args += ["--", python, "-I", "-S", str(script), PROXY_SOCKET_INSIDE, str(BRIDGE_PORT), "--"]
    else:
        args.append("--")
    return args


def _system() -> list[str]:
    """The system folders read-only; where the host links one to another (`/bin -> usr/bin`), the same link."""
    args: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _inside(paths: Iterable[Path], visible: list[Path], mounted: list[Path]) -> list[Path]:
    """The paths that exist, lie in a visible folder, and hold no writable mount (emptying a
    folder that holds the workspace would hide the workspace)."""
    chosen: list[Path] = []
    for path in dict.fromkeys(paths):
        if not _exists(path) or not any(covers(v, path) for v in visible):
            continue
        if any(covers(path, m) for m in mounted if m != path):
            continue
        chosen.append(path)
    return chosen


def _ancestors(paths: Iterable[Path], writable: list[Path]) -> list[Path]:
    """The existing folders strictly between a writable root and each path, shallowest first."""
    found: set[Path] = set()
    for path in paths:
        root = next((w for w in writable if path != w and covers(w, path)), None)
        if root is None:
            continue
        folder = path.parent
        while folder != root and covers(root, folder):
            if os.path.isdir(folder) and not os.path.islink(folder):
                found.add(folder)
            folder = folder.parent
    return sorted(found, key=lambda p: len(p.parts))


def _exists(path: Path) -> bool:
    return os.path.lexists(path)
