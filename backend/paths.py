"""Where the built-in modes, skills and workflows live (beside the package), and private folders and files."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_MODES_DIR = ROOT / "modes"
BUILTIN_WORKFLOWS_DIR = BUILTIN_MODES_DIR / "workflows"
BUILTIN_SKILLS_DIR = ROOT / "skills"

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
"""What a person tells every agent, read from the workspace into each run's system prompt."""
HEARTBEAT_FILE = "HEARTBEAT.md"
"""The heartbeat's task list, in the workspace."""
WORKSPACE_SKILLS_DIR = ".overseer/skills"
"""Where a workspace keeps its own skills, relative to its root (counted only once trusted)."""


# Transcripts, the audit log, tool output and tokens live under the data dir: other users of the
# machine must not read them, whichever command (serve, run, servers, mcp) creates them first.
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def existing_directory(path: str) -> Path | None:
    """`path`, with `~` expanded, if it names a directory; None if it names nothing or something else.

    pathlib answers "no" by raising for a name the OS will not even look up (a component over 255
    bytes: ENAMETOOLONG) and for `~user` with no such user (RuntimeError). A client sends these
    paths, so both mean "not a directory" (a 400 naming it), not a crash (a 500).
    """
    try:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_dir() else None
    except (OSError, RuntimeError):
        return None


def private_dir(path: Path) -> Path:
    """Create `path` with every missing folder on the way owner-only (0700).

    A folder that already exists keeps its mode: it may be shared on purpose (`/tmp`, a home).
    """
    missing: list[Path] = []
    current = path
    while not current.exists() and current.parent != current:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
        os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode passes through the umask
    return path


def private_opener(path: str, flags: int) -> int:
    """An `open(..., opener=)` that creates files owner-only (an existing file keeps its mode)."""
    return os.open(path, flags, PRIVATE_FILE_MODE)


def private_file(path: Path) -> Path:
    """Create `path` empty and owner-only if it is missing; make it owner-only if it is not."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE_MODE))
    os.chmod(path, PRIVATE_FILE_MODE)
    return path
