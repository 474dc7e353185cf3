"""The one owner of policy state: permission rules, per-tool policies and "always allow" writes.

The gate reads the rules in force through `engine` (it never holds its own copy) and the
settings routes change them here. Every change is validated first, written to the config file,
and then applied at once; a change that does not validate changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from backend.domain.tools import ToolInfo
from backend.config import PermissionsConfig, PolicyValue, Settings, append_allow_rules, update_config_file
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
from backend.rules.grammar import RuleSet

log = logging.getLogger(__name__)


def build_policy(permissions: PermissionsConfig, policies: Mapping[str, PolicyValue], *, read_only_auto_allow: bool) -> PolicyEngine:
    """Rules from the config, policies over the defaults."""
    rules = RuleSet.from_config(permissions.model_dump(), source="user")
    return PolicyEngine(rules, {**DEFAULT_POLICIES, **policies}, read_only_auto_allow=read_only_auto_allow)


class PolicyService:
    """Holds the rules and policies in force and is the only writer of them (a `PolicySource`)."""

    def __init__(self, settings: Settings) -> None:
        self._config_file: Path = settings.writable_config_file
        self._trust = settings.trust_store  # a trusted workspace config stays trusted through our writes
        self._read_only_auto_allow = settings.read_only_auto_allow
        self._permissions = settings.permissions.model_copy(deep=True)
        self._policies: dict[str, PolicyValue] = dict(settings.policies)
        self._engine = self._build(self._permissions, self._policies)
        # Settings routes run in the event loop, "always allow" too; the lock only guards the
        # read-modify-write of the config file against a future caller from a worker thread.
        self._lock = threading.Lock()

    @property
    def engine(self) -> PolicyEngine:
        """The rules and policies in force now."""
        return self._engine

    @property
    def permissions(self) -> PermissionsConfig:
        return self._permissions.model_copy(deep=True)

    @property
    def policies(self) -> dict[str, PolicyValue]:
        return dict(self._policies)

    def policy_for(self, tool_name: str) -> PolicyValue | None:
        """The policy set for a tool (by name or pattern), or None."""
        return self.engine.policy_for(tool_name)

    def effective_policy(self, tool: ToolInfo) -> PolicyValue:
        """What a call of `tool` that no rule matches gets: its policy, read-only auto-allow, or ask."""
        return self.engine.effective_policy(tool.name, tool.annotations)

    def set_permissions(self, permissions: PermissionsConfig) -> PermissionsConfig:
        """Replace the rule lists: validated first (RuleError names the rule), then saved and applied."""
        RuleSet.from_config(permissions.model_dump(), source="request", strict=True)
        engine = self._build(permissions, self._policies)
        with self._lock:
            update_config_file(
                self._config_file, lambda data: data.__setitem__("permissions", permissions.model_dump()), trust=self._trust
            )
            self._permissions, self._engine = permissions.model_copy(deep=True), engine
        return self.permissions

    def set_policies(self, policies: Mapping[str, PolicyValue]) -> dict[str, PolicyValue]:
        """Merge per-tool/per-server policies: validated, saved and applied at once."""
        merged = {**self._policies, **policies}
        engine = self._build(self._permissions, merged)
        with self._lock:
            update_config_file(self._config_file, lambda data: data.__setitem__("policies", merged), trust=self._trust)
            self._policies, self._engine = merged, engine
        return self.policies

    def add_always_allow(self, rules: list[str]) -> None:
        """Add "always allow" rules to the config file and the rules in force; idempotent.

        The rules were validated (and, for a non-admin, narrowed) by the approval door before
        the approval closed; a rule already in force writes nothing.
        """
        with self._lock:
            new = [r for r in rules if r not in self._permissions.allow]
            if not new:
                return
            append_allow_rules(self._config_file, new, trust=self._trust)
            self._permissions.allow.extend(new)
            self._engine = self._engine.with_rules(RuleSet.from_config({"allow": new}, source="user"))
        log.info("always-allow rules %s written to %s", new, self._config_file)

    def _build(self, permissions: PermissionsConfig, policies: Mapping[str, PolicyValue]) -> PolicyEngine:
        return build_policy(permissions, policies, read_only_auto_allow=self._read_only_auto_allow)
