"""docs/architecture.md stays true to the tree: what it names exists, and every part of backend/ is on its map."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"

FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
REPO_PATH = re.compile(r"(?<![\w./-])(?:backend|mcp_servers|web|tests|docs|scripts)/[\w./<>-]*")
DOTTED_MODULE = re.compile(r"(?<![\w.])backend(?:\.\w+)+")
PLACEHOLDER = re.compile(r"<[^>]+>")


def code_spans() -> list[str]:
    """The page's inline code, outside fenced blocks (the picture names no paths to check)."""
    text = FENCED.sub("", PAGE.read_text(encoding="utf-8"))
    return CODE_SPAN.findall(text)


def named_paths() -> set[str]:
    """Repository paths in the page's inline code, as written (`backend/api/`, `web/src/api.gen.ts`)."""
    return {match.rstrip(".,:;") for span in code_spans() for match in REPO_PATH.findall(span)}


def named_modules() -> set[str]:
    """Dotted `backend.x.y` names in the page's inline code."""
    return {match for span in code_spans() for match in DOTTED_MODULE.findall(span)}


def exists(path: str) -> bool:
    """A file or folder of the repository; `<name>` in a path stands for any one entry."""
    if "<" in path:
        return any(ROOT.glob(PLACEHOLDER.sub("*", path.rstrip("/"))))
    return (ROOT / path).exists()


def is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def test_every_path_the_architecture_page_names_exists():
    paths = named_paths()
    assert "backend/approvals/gate.py" in paths  # the parser finds what the page names
    assert sorted(p for p in paths if not exists(p)) == []


def test_every_module_the_architecture_page_names_exists():
    modules = named_modules()
    assert "backend.api.openapi_dump" in modules
    assert sorted(m for m in modules if not is_module(m)) == []


def test_every_top_level_package_and_module_of_backend_is_on_the_map():
    # A new package or module of backend/ must be placed on the map, as pyproject's layers place it.
    on_page = {p.rstrip("/") for p in named_paths()}
    backend = ROOT / "backend"
    parts = sorted(
        f"backend/{entry.name}"
        for entry in backend.iterdir()
        if (entry.is_dir() and (entry / "__init__.py").is_file())
        or (entry.suffix == ".py" and entry.name != "__init__.py")
    )
    assert parts, "backend/ has no packages or modules?"
    assert [p for p in parts if p not in on_page] == []
