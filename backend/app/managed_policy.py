"""Finding and reading the managed policy file, and refusing settings it forbids (issue 34, item 2).

The file lives outside any workspace: `/etc/overseer/managed.yaml`, or wherever
`OVERSEER_MANAGED_POLICY` points. No route, dashboard user or admin writes it; only whoever may
write that path (root, a fleet tool). Missing: no managed layer. Present but unreadable, not YAML,
or holding a key or rule Overseer cannot use: the host refuses to start and says exactly why
(a policy meant to restrict must never be dropped silently).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from backend.config import ConfigError, Settings
from backend.domain.errors import Forbidden
from backend.mcp.config import McpServerConfig
from backend.rules.managed import NO_MANAGED_POLICY, ManagedLocked, ManagedPolicy, ManagedSwitch

DEFAULT_MANAGED_POLICY = Path("/etc/overseer/managed.yaml")
MANAGED_POLICY_ENV = "OVERSEER_MANAGED_POLICY"

log = logging.getLogger(__name__)


class ManagedPolicyError(ConfigError):
    """The managed file exists but cannot be used: the host does not start."""


class LockedByManagedPolicy(Forbidden):
    """A request to loosen what the managed policy fixes (403, naming the setting and the file)."""


def managed_policy_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the managed file is looked for: `OVERSEER_MANAGED_POLICY`, else the default."""
    env = os.environ if environ is None else environ
    given = env.get(MANAGED_POLICY_ENV, "").strip()
    return Path(given).expanduser() if given else DEFAULT_MANAGED_POLICY


def load_managed_policy(path: Path | None = None) -> ManagedPolicy:
    """The managed policy in force: NO_MANAGED_POLICY when the file is missing; ManagedPolicyError
    (with the file and the key) when it cannot be read or used."""
    path = managed_policy_path() if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return NO_MANAGED_POLICY
    except OSError as exc:
        raise ManagedPolicyError(f"managed policy {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ManagedPolicyError(f"managed policy {path} is not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ManagedPolicyError(f"managed policy {path} must be a mapping, got {type(data).__name__}")
    try:
        policy = ManagedPolicy.model_validate(data)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()]
        raise ManagedPolicyError(f"managed policy {path} is invalid:\n" + "\n".join(lines)) from exc
    policy.source = str(path)
    log.info("managed policy %s in force", path)
    return policy


def refused(exc: ManagedLocked) -> LockedByManagedPolicy:
    """The 403 the doors raise for a ManagedLocked."""
    return LockedByManagedPolicy(str(exc))


def check_switch(policy: ManagedPolicy, switch: ManagedSwitch, what: str) -> None:
    """LockedByManagedPolicy (403) when `switch` is on."""
    try:
        policy.check_switch(switch, what)
    except ManagedLocked as exc:
        raise refused(exc) from None


def check_settings(policy: ManagedPolicy, settings: Settings) -> None:
    """ManagedPolicyError when the settings ask for what the managed policy forbids (the host does not start)."""
    if policy.disable_unsandboxed and settings.sandbox.backend == "off":
        raise ManagedPolicyError(f"sandbox: off is refused: {policy.where('disable_unsandboxed')}")


def allowed_servers(policy: ManagedPolicy, servers: Mapping[str, McpServerConfig]) -> dict[str, McpServerConfig]:
    """The servers the managed allow-list admits; each one left out is logged with the reason.

    Overseer's built-in servers (`managed: true` in their config) are not filtered."""
    kept: dict[str, McpServerConfig] = {}
    for name, cfg in servers.items():
        why = None if cfg.managed else server_refusal(policy, name, cfg)
        if why is None:
            kept[name] = cfg
        else:
            log.warning("%s; not started", why)
    return kept


def server_refusal(policy: ManagedPolicy, name: str, cfg: McpServerConfig) -> str | None:
    """Why the managed allow-list keeps this server from starting, or None."""
    command = " ".join([cfg.command, *cfg.args]).strip() or None
    return policy.server_refusal(name, command, cfg.url)


class ManagedRule(BaseModel):
    """One managed rule as the dashboard shows it: locked, with the file it comes from."""

    effect: str
    rule: str
    setting: str
    """`permissions.deny 'Bash(curl *)'`: what a refusal names."""


class BlockedServer(BaseModel):
    """A configured MCP server the managed allow-list keeps from starting."""

    name: str
    reason: str


class ManagedPolicyView(BaseModel):
    """The managed policy as every signed-in user may read it (they cannot change it)."""

    active: bool
    """False: no managed file; nothing below is locked."""
    source: str
    rules: list[ManagedRule]
    disable_allow_always: bool
    disable_auto_approve: bool
    disable_approve_all: bool
    disable_unsandboxed: bool
    allowed_mcp_servers: list[str] | None
    blocked_servers: list[BlockedServer]
    hook_events: list[str]


def view_of(policy: ManagedPolicy, servers: Mapping[str, McpServerConfig]) -> ManagedPolicyView:
    """What GET /api/policy/managed answers."""
    rules = [
        ManagedRule(effect=effect, rule=rule, setting=f"permissions.{effect} {rule!r}")
        for effect in ("deny", "ask")
        for rule in getattr(policy.permissions, effect)
    ]
    blocked = [
        BlockedServer(name=name, reason=why)
        for name, cfg in servers.items()
        if not cfg.managed and (why := server_refusal(policy, name, cfg)) is not None
    ]
    patterns = None if policy.allowed_mcp_servers is None else [p.text for p in policy.allowed_mcp_servers]
    return ManagedPolicyView(
        active=policy is not NO_MANAGED_POLICY and bool(policy.source),
        source=policy.source,
        rules=rules,
        disable_allow_always=policy.disable_allow_always,
        disable_auto_approve=policy.disable_auto_approve,
        disable_approve_all=policy.disable_approve_all,
        disable_unsandboxed=policy.disable_unsandboxed,
        allowed_mcp_servers=patterns,
        blocked_servers=blocked,
        hook_events=sorted(policy.hooks.root),
    )
