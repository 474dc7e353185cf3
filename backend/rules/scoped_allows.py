""""Always allow" rules kept for one workspace's or one named agent's sessions, not for all.

A non-admin's "always allow" lands here (issue 31, item 2): the rule covers later sessions of the
same workspace (or of the same named agent), never every session. The map is pure; its owner
(`PolicyService`) persists it in the data dir.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.domain.models import StandingScope
from backend.rules.grammar import RuleError, RuleSet

LOCAL_KINDS = ("workspace", "agent")


class ScopedAllows:
    """Allow rules by scope (`workspace` path or `agent` id), each list parsed once."""

    def __init__(self) -> None:
        self._raw: dict[tuple[str, str], list[str]] = {}
        self._parsed: dict[tuple[str, str], RuleSet] = {}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ScopedAllows:
        """From `{"workspace": {path: [rules]}, "agent": {id: [rules]}}`; RuleError names a bad entry."""
        found = cls()
        for kind in LOCAL_KINDS:
            entries = data.get(kind) or {}
            if not isinstance(entries, Mapping):
                raise RuleError(f"{kind}: expected a mapping of {kind} to rule lists")
            for name, rules in entries.items():
                if not isinstance(rules, list):
                    raise RuleError(f"{kind} {name!r}: expected a list of rules")
                found.add(StandingScope(kind=kind, name=str(name)), rules)
        return found

    def as_data(self) -> dict[str, dict[str, list[str]]]:
        """The map as it is saved."""
        data: dict[str, dict[str, list[str]]] = {kind: {} for kind in LOCAL_KINDS}
        for (kind, name), rules in sorted(self._raw.items()):
            data[kind][name] = list(rules)
        return data

    def rules_for(self, scope: StandingScope) -> RuleSet | None:
        """The allow rules kept for `scope`, or None."""
        return self._parsed.get((scope.kind, scope.name))

    def raw_for(self, scope: StandingScope) -> list[str]:
        return list(self._raw.get((scope.kind, scope.name), ()))

    def add(self, scope: StandingScope, rules: list[str]) -> list[str]:
        """Add the rules not yet kept for `scope` (RuleError if one does not parse); returns them."""
        if scope.kind not in LOCAL_KINDS or not scope.name:
            raise RuleError(f"scoped rules are kept for a workspace or an agent, not {scope.kind!r}")
        key = (scope.kind, scope.name)
        kept = self._raw.get(key, [])
        new = [r for r in dict.fromkeys(rules) if r not in kept]
        if not new:
            return []
        source = f"always ({scope.kind} {scope.name})"
        parsed = RuleSet.from_config({"allow": new}, source=source, strict=True)
        self._raw[key] = kept + new
        self._parsed[key] = RuleSet.concat(self._parsed.get(key), parsed)
        return new
