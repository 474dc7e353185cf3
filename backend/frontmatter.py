"""Markdown files with YAML front matter: modes, skills and bootstrap files share this format.

    ---
    name: plan
    description: Think first.
    ---
    The body.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import yaml

from backend.domain.errors import BadRequest

FENCE = "---"


class FrontMatterError(BadRequest):
    """A file whose front matter cannot be read; the message names the file and the fault."""


def parse_front_matter(text: str, *, source: str) -> tuple[dict[str, Any], str]:
    """Split `text` into its front matter (a mapping, {} when absent) and its body.

    `source` names the file in error messages. A file that opens a fence and never closes it,
    or whose YAML is invalid or not a mapping, raises FrontMatterError.
    """
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return {}, text
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == FENCE:
            break
    else:
        raise FrontMatterError(f"{source}: front matter opened with '---' on line 1 is never closed")
    raw = "".join(lines[1:end])
    try:
        meta = copy.deepcopy(_load_yaml(raw)) if raw.strip() else {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"{source}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise FrontMatterError(f"{source}: front matter must be a mapping of keys, got {type(meta).__name__}")
    return meta, "".join(lines[end + 1 :]).lstrip("\n")


@functools.lru_cache(maxsize=512)
def _load_yaml(raw: str) -> Any:
    """Mode and skill files are read for every turn; their YAML is parsed once per distinct text
    (the callers get a deep copy, so nothing they change reaches the cache)."""
    return yaml.safe_load(raw)


def render_front_matter(meta: dict[str, Any], body: str) -> str:
    """The inverse of parse_front_matter: keys in the order given, the body after the fence."""
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False).strip()
    return f"{FENCE}\n{dumped}\n{FENCE}\n\n{body.strip()}\n"
