"""Bootstrap files: what a person tells every agent about the project, itself, them and the tools.

Each of AGENTS.md, SOUL.md, USER.md and TOOLS.md is taken from the workspace when it has one,
else from the data dir, and read afresh for every run so an edit counts from the next turn.
"""

from __future__ import annotations

from pathlib import Path

from backend.engine.turns.prompt import BootstrapFile
from backend.paths import BOOTSTRAP_FILES

BOOTSTRAP_NAMES = BOOTSTRAP_FILES
MAX_BOOTSTRAP_CHARS = 32_000
"""Per file; a longer file is cut with a note, so one runaway file cannot crowd out the prompt."""


def read_bootstrap_files(workspace: Path, data_dir: Path) -> list[BootstrapFile]:
    found = []
    for name in BOOTSTRAP_NAMES:
        for folder in (workspace, data_dir):
            path = folder / name
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # unreadable: as if absent, the next source may have one
            if len(text) > MAX_BOOTSTRAP_CHARS:
                text = text[:MAX_BOOTSTRAP_CHARS] + f"\n[... cut at {MAX_BOOTSTRAP_CHARS} characters; read {path} for the rest]"
            found.append(BootstrapFile(name=name, path=path, text=text))
            break
    return found
