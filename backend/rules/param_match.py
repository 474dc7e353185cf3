"""`param:value-glob` specifiers for MCP tools without a kind of their own (Overseer extension)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from backend.rules.globbing import compile_star

ParamMatch = Literal["match", "miss", "unchecked"]

PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
"""What a parameter's name may be in a `param:value-glob` specifier."""
_SPEC = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*):(.*)$", re.DOTALL)


@dataclass(frozen=True)
class ParamPattern:
    """One top-level argument and a star glob its value must match."""

    name: str
    value: str
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_regex", compile_star(self.value))

    @classmethod
    def parse(cls, specifier: str) -> ParamPattern:
        """`repo:acme/*` -> pattern; ValueError when the specifier is not `name:glob`."""
        found = _SPEC.match(specifier)
        if found is None:
            raise ValueError(f"expected <param>:<value-glob>, got {specifier!r}")
        return cls(found.group(1), found.group(2))

    def match(self, arguments: object) -> ParamMatch:
        """Match the call's arguments.

        An omitted argument never matches; a value that is not a scalar cannot be compared, and
        is reported "unchecked" so the caller can fail closed.
        """
        if not isinstance(arguments, dict):
            return "unchecked"
        if self.name not in arguments:
            return "miss"
        text = _scalar_text(arguments[self.name])
        if text is None:
            return "unchecked"
        return "match" if self._regex.fullmatch(text) else "miss"


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return None
