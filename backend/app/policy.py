"""The one owner of policy state: permission rules, per-tool policies and "always allow" writes.

The gate reads the rules in force through `engine` (it never holds its own copy) and the
settings routes change them here. Every change is validated first, written to the config file,
and then applied at once; a change that does not validate changes nothing.

An "always allow" for one workspace's (or one named agent's) sessions, what a non-admin may
write, is kept apart from the global policy, in `always_rules.json` in the data dir (owner-only).

The managed policy (backend/app/managed_policy.py) sits above all of it: its deny and ask rules
go into every engine built here, evaluated first, and a change that would loosen them (an allow
rule written as a managed rule, "always allow" while it is turned off) is refused with a 403.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from backend.domain.models import StandingScope
from backend.domain.tools import ToolInfo
from backend.app.managed_policy import ManagedPolicyView, refused, view_of
from backend.config import PermissionsConfig, PolicyValue, Settings, append_allow_rules, update_config_file
from backend.paths import private_dir, private_opener
from backend.app.server_configs import skill_read_roots
from backend.rules.own_data import OwnDataGuard
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
from backend.rules.grammar import RuleError, RuleSet
from backend.rules.managed import NO_MANAGED_POLICY, ManagedLocked, ManagedPolicy
from backend.rules.permission_modes import mode_rules
from backend.rules.scoped_allows import ScopedAllows

SCOPED_RULES_FILE = "always_rules.json"
_BLOCK_SETTINGS = ("defaultMode", "additionalDirectories", "disableBypassPermissionsMode")

log = logging.getLogger(__name__)


def build_policy(
    permissions: PermissionsConfig,
    policies: Mapping[str, PolicyValue],
    *,
    read_only_auto_allow: bool,
    managed: ManagedPolicy = NO_MANAGED_POLICY,
    allow_read_only_tools: bool = False,
    own_data: OwnDataGuard | None = None,
) -> PolicyEngine:
    """Rules from the config, policies over the defaults, the managed rules above both, and
    Overseer's own folders (`own_data`) above everything."""
    rules = RuleSet.from_config(permissions.model_dump(), source="user") + mode_rules(permissions.defaultMode, managed)
    return PolicyEngine(
        rules, {**DEFAULT_POLICIES, **policies}, read_only_auto_allow=read_only_auto_allow,
        managed=managed.rules(),
        allow_read_only_tools=allow_read_only_tools,
        own_data=own_data,
    )


class PolicyService:
    """Holds the rules and policies in force and is the only writer of them (a `PolicySource`)."""

    def __init__(self, settings: Settings, *, managed: ManagedPolicy = NO_MANAGED_POLICY) -> None:
        self.managed = managed
        self._servers = dict(settings.mcp_servers)  # the configured ones, for the allow-list's verdicts
        self._config_file: Path = settings.writable_config_file
        self._trust = settings.trust_store  # a trusted workspace config stays trusted through our writes
        self._read_only_auto_allow = settings.read_only_auto_allow
        self._allow_read_only_tools = settings.allow_read_only_tools
        self._permissions = settings.permissions.model_copy(deep=True)
        self._policies: dict[str, PolicyValue] = dict(settings.policies)
        self._own_data = OwnDataGuard.of(
            data_dir=settings.data_dir, checkpoints_dir=settings.checkpoints_dir, read_roots=skill_read_roots(settings)
        )
        self._engine = self._build(self._permissions, self._policies)
        self._scoped_file = settings.data_dir.expanduser() / SCOPED_RULES_FILE
        self._scoped = load_scoped(self._scoped_file)
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

    def managed_view(self) -> ManagedPolicyView:
        """The managed policy as the dashboard shows it: locked rules, switches, servers kept out."""
        return view_of(self.managed, self._servers)

    def policy_for(self, tool_name: str) -> PolicyValue | None:
        """The policy set for a tool (by name or pattern), or None."""
        return self.engine.policy_for(tool_name)

    def effective_policy(self, tool: ToolInfo) -> PolicyValue:
        """What a call of `tool` that no rule matches gets: its policy, read-only auto-allow, or ask
        (always ask for a tool changed since it was pinned, issue 34)."""
        return "ask" if tool.changed is not None else self.engine.effective_policy(tool.name, tool.annotations)

    def set_permissions(self, permissions: PermissionsConfig) -> PermissionsConfig:
        """Replace the rule lists: validated first (RuleError names the rule; LockedByManagedPolicy an
        allow rule written as a managed deny or ask rule), then saved and applied."""
        self._check_not_loosening(permissions.allow)
        RuleSet.from_config(permissions.model_dump(), source="request", strict=True)
        # A body with the rule lists alone (the dashboard's) keeps the block's defaultMode and directories.
        kept = {k: getattr(self._permissions, k) for k in _BLOCK_SETTINGS if k not in permissions.model_fields_set}
        permissions = permissions.model_copy(update=kept)
        engine = self._build(permissions, self._policies)
        with self._lock:
            update_config_file(
                self._config_file, lambda data: data.__setitem__("permissions", permissions.as_written()), trust=self._trust
            )
            self._permissions, self._engine = permissions.model_copy(deep=True), engine
        return self.permissions

    def set_policies(self, policies: Mapping[str, PolicyValue]) -> dict[str, PolicyValue]:
        """Merge per-tool/per-server policies: validated, saved and applied at once.
        LockedByManagedPolicy for `always_allow` on a name the managed policy denies or asks about."""
        self._check_not_loosening([key for key, value in policies.items() if value == "always_allow"])
        merged = {**self._policies, **policies}
        engine = self._build(self._permissions, merged)
        with self._lock:
            update_config_file(self._config_file, lambda data: data.__setitem__("policies", merged), trust=self._trust)
            self._policies, self._engine = merged, engine
        return self.policies

    def scoped_rules(self, scope: StandingScope) -> RuleSet | None:
        """The "always allow" rules kept for one workspace's (or named agent's) sessions."""
        return self._scoped.rules_for(scope)

    def scoped_rule_texts(self, scope: StandingScope) -> list[str]:
        """The same rules as written."""
        return self._scoped.raw_for(scope)

    def add_always_allow(self, rules: list[str], *, scope: StandingScope | None = None) -> None:
        """Add "always allow" rules for `scope`'s sessions, or (None) to the config file and the
        rules in force for every session; idempotent.

        The rules were validated (and, for a non-admin, narrowed and scoped) by the approval door
        before the approval closed; a rule already kept there writes nothing. The door refuses
        what the managed policy forbids; should anything reach here anyway (the gate calls this
        after the call was allowed, and must not fail), it writes nothing and says so.
        """
        if self.managed.disable_allow_always:
            log.warning("always-allow rules %s not kept: %s", rules, self.managed.where("disable_allow_always"))
            return
        rules = [r for r in rules if self.managed.rule_named(r) is None]
        if scope is not None:
            with self._lock:
                new = self._scoped.add(scope, rules)
                if new:
                    _save_scoped(self._scoped_file, self._scoped)
            if new:
                log.info("always-allow rules %s kept for %s", new, scope.label or f"{scope.kind} {scope.name}")
            return
        with self._lock:
            new = [r for r in rules if r not in self._permissions.allow]
            if not new:
                return
            append_allow_rules(self._config_file, new, trust=self._trust)
            self._permissions.allow.extend(new)
            self._engine = self._engine.with_rules(RuleSet.from_config({"allow": new}, source="user"))
        log.info("always-allow rules %s written to %s", new, self._config_file)

    def _check_not_loosening(self, allow: list[str]) -> None:
        try:
            self.managed.check_allow_rules(allow)
        except ManagedLocked as exc:
            raise refused(exc) from None

    def _build(self, permissions: PermissionsConfig, policies: Mapping[str, PolicyValue]) -> PolicyEngine:
        return build_policy(
            permissions,
            policies,
            read_only_auto_allow=self._read_only_auto_allow,
            managed=self.managed,
            allow_read_only_tools=self._allow_read_only_tools,
            own_data=self._own_data,
        )


def load_scoped(path: Path) -> ScopedAllows:
    """The scoped rules saved in `path`; none when it is missing. Only allow rules live there,
    so a file that cannot be read allows nothing more (said loudly, never a crash)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ScopedAllows()
    except (OSError, ValueError) as exc:
        log.error("%s cannot be read (%s): its always-allow rules are not in force", path, exc)
        return ScopedAllows()
    try:
        return ScopedAllows.from_data(data if isinstance(data, dict) else {})
    except RuleError as exc:
        log.error("%s holds a bad rule (%s): its always-allow rules are not in force", path, exc)
        return ScopedAllows()


def _save_scoped(path: Path, scoped: ScopedAllows) -> None:
    private_dir(path.parent)
    temp = path.with_suffix(".json.tmp")
    with open(temp, "w", encoding="utf-8", opener=private_opener) as out:
        json.dump(scoped.as_data(), out, indent=1)
    os.replace(temp, path)
