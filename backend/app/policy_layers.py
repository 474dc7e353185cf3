"""The effective policy, each rule and per-tool policy with the layer it comes from (`overseer policy show`).

Layers, from the top: the managed file (its deny and ask rules are evaluated before anything
else), the config file (overseer.yaml, or the environment where there is none), the "always
allow" rules kept per workspace or named agent (always_rules.json), each named agent's own rules,
each mode's per-tool policies (they come before the config's for that mode's sessions), and the
built-in defaults. A session's "allow for this session" rules live with the session; the
dashboard's "Runs without asking" strip shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backend.app.managed_policy import managed_policy_path
from backend.app.policy import SCOPED_RULES_FILE, load_scoped
from backend.config import Settings
from backend.modes.registry import ModeRegistry
from backend.paths import BUILTIN_MODES_DIR
from backend.rules.managed import ManagedPolicy
from backend.rules.permission_modes import mode_rules
from backend.rules.policy_engine import DEFAULT_POLICIES

LayerKind = Literal["managed", "config", "always-rules", "agent", "mode", "default"]

SWITCHES = ("disable_allow_always", "disable_auto_approve", "disable_approve_all", "disable_unsandboxed")


@dataclass(kw_only=True)
class LayeredRule:
    """One rule or per-tool policy in force, and where it comes from."""

    layer: LayerKind
    where: str
    """The file (or scope) it is read from, as a person finds it."""
    kind: Literal["rule", "policy"]
    effect: str
    """deny, ask or allow for a rule; always_allow, ask or deny for a policy."""
    text: str
    locked: bool = False
    """True for the managed layer: nothing below may loosen it."""


@dataclass(kw_only=True)
class EffectivePolicy:
    """Every rule and policy in force, top layer first, and the managed switches."""

    entries: list[LayeredRule] = field(default_factory=list)
    managed_source: str | None = None
    switches: dict[str, bool] = field(default_factory=dict)
    allowed_mcp_servers: list[str] | None = None
    managed_hook_events: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "managed": self.managed_source,
            "switches": self.switches,
            "allowed_mcp_servers": self.allowed_mcp_servers,
            "managed_hook_events": self.managed_hook_events,
            "entries": [vars(e) for e in self.entries],
        }


_EFFECTS = ("deny", "ask", "allow")


def effective_policy(settings: Settings, managed: ManagedPolicy) -> EffectivePolicy:
    """The layers as the host would build them from `settings` and `managed`."""
    found = EffectivePolicy()
    if managed.source:
        found.managed_source = managed.source
        found.switches = {name: bool(getattr(managed, name)) for name in SWITCHES}
        if managed.allowed_mcp_servers is not None:
            found.allowed_mcp_servers = [p.text for p in managed.allowed_mcp_servers]
        found.managed_hook_events = sorted(managed.hooks.root)
        for effect in ("deny", "ask"):
            for rule in getattr(managed.permissions, effect):
                found.entries.append(
                    LayeredRule(layer="managed", where=managed.source, kind="rule", effect=effect, text=rule, locked=True)
                )
    config = str(settings.config_file) if settings.config_file is not None else "environment"
    permissions = settings.permissions.model_dump()
    for effect in _EFFECTS:
        for rule in permissions.get(effect) or []:
            found.entries.append(LayeredRule(layer="config", where=config, kind="rule", effect=effect, text=rule))
    for rule in mode_rules(settings.permissions.defaultMode, managed).allow:  # issue 35, item 11: acceptEdits
        found.entries.append(LayeredRule(layer="config", where=f"{config} ({rule.source})", kind="rule", effect="allow", text=rule.raw))
    scoped = load_scoped(settings.data_dir.expanduser() / SCOPED_RULES_FILE)
    for label, rules in _scoped_rules(scoped):
        for rule in rules:
            found.entries.append(LayeredRule(layer="always-rules", where=label, kind="rule", effect="allow", text=rule))
    for agent in settings.agents:
        name = str(agent.get("id") or agent.get("name") or "?")
        agent_permissions = agent.get("permissions") or {}
        for effect in _EFFECTS:
            for rule in agent_permissions.get(effect) or []:
                found.entries.append(
                    LayeredRule(layer="agent", where=f"agent {name}", kind="rule", effect=effect, text=str(rule))
                )
    for key, value in settings.policies.items():
        found.entries.append(LayeredRule(layer="config", where=config, kind="policy", effect=value, text=key))
    modes = ModeRegistry(BUILTIN_MODES_DIR, settings.data_dir.expanduser() / "modes")
    for mode in modes.list():
        for key, value in (mode.policies or {}).items():
            found.entries.append(LayeredRule(layer="mode", where=f"mode {mode.name}", kind="policy", effect=value, text=key))
    for key, value in DEFAULT_POLICIES.items():
        if key not in settings.policies:
            found.entries.append(LayeredRule(layer="default", where="built in", kind="policy", effect=value, text=key))
    return found


def _scoped_rules(scoped: Any) -> list[tuple[str, list[str]]]:
    """(scope label, rules) for each workspace or agent that keeps "always allow" rules."""
    data = scoped.as_data()
    out: list[tuple[str, list[str]]] = []
    for kind, by_name in sorted(data.items()) if isinstance(data, dict) else []:
        if not isinstance(by_name, dict):
            continue
        for name, rules in sorted(by_name.items()):
            out.append((f"{kind} {name} ({SCOPED_RULES_FILE})", [str(r) for r in rules]))
    return out


def managed_location() -> Path:
    """Where the managed file is looked for (named when there is none)."""
    return managed_policy_path()
