"""Where the built-in modes, skills and workflows live: beside the package, in the repository."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_MODES_DIR = ROOT / "modes"
BUILTIN_WORKFLOWS_DIR = BUILTIN_MODES_DIR / "workflows"
BUILTIN_SKILLS_DIR = ROOT / "skills"
