"""The managed policy: what an organisation fixes above every other layer (issue 34, item 2).

Read from a file outside any workspace (backend/app/managed_policy.py finds and reads it); this
module is its typed model and the pure questions asked of it, no I/O. Like Claude Code's managed
settings (`permissions.deny`/`ask` in managed-settings.json, `disableBypassPermissionsMode`,
`allowedMcpServers`) and Gemini CLI's `disableAlwaysAllow`: nothing below it (overseer.yaml, an
admin on the dashboard, an "always allow", a session rule, auto-approve, `--approve all`) can
loosen it. Its deny and ask rules are evaluated first by the PolicyEngine; its switches are
checked at each door that would otherwise loosen something.
"""

from __future__ import annotations

import fnmatch
import shlex
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.domain.hook_config import HOOK_EVENTS, HooksConfig
from backend.rules.grammar import RuleError, RuleSet

MANAGED_SOURCE = "managed"
"""The `source` of every managed rule (and of an Evaluation a managed rule decided)."""

MANAGED_PREFIX = "Managed policy: "
"""How the reason of a verdict a managed rule gave begins: an approval asked with it needs a person
(auto-approve and `--approve all` never answer it), whatever else the card says."""

ManagedSwitch = Literal["disable_allow_always", "disable_auto_approve", "disable_approve_all", "disable_unsandboxed"]


class ManagedLocked(Exception):
    """An attempt to loosen what the managed policy fixes; the message names the setting and the file.

    Plain Exception here (rules/ is pure); the app layer raises it as a 403 (backend/app/managed_policy.py).
    """


class ManagedPolicyInvalid(ValueError):
    """The managed file cannot be used: the host refuses to start (fail closed)."""


class ManagedPermissions(BaseModel):
    """Claude Code's `permissions` block, managed: deny and ask only (an allow here would loosen)."""

    model_config = ConfigDict(extra="forbid")
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _rules_parse(self) -> ManagedPermissions:
        try:
            RuleSet.from_config(self.model_dump(), source=MANAGED_SOURCE, strict=True)
        except RuleError as exc:
            raise ValueError(str(exc)) from exc
        return self


class ServerPattern(BaseModel):
    """One allowed MCP server: by name, by command line or by URL, each a `*` glob (Claude Code's
    `serverName`, `serverCommand`, `serverUrl`). A plain string in the file means `name`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str | None = Field(default=None, alias="serverName")
    command: str | None = Field(default=None, alias="serverCommand")
    url: str | None = Field(default=None, alias="serverUrl")

    @model_validator(mode="before")
    @classmethod
    def _plain_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if isinstance(data, dict) and isinstance(data.get("serverCommand"), list):  # Claude Code writes a list
            data = {**data, "serverCommand": shlex.join(str(p) for p in data["serverCommand"])}
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> ServerPattern:
        given = [v for v in (self.name, self.command, self.url) if v is not None]
        if len(given) != 1:
            raise ValueError("an allowed server names exactly one of name, command or url")
        return self

    @property
    def text(self) -> str:
        """As a person reads it: `name github`, `command npx *`, `url https://*.corp/*`."""
        if self.name is not None:
            return f"name {self.name}"
        if self.command is not None:
            return f"command {self.command}"
        return f"url {self.url}"

    def admits(self, name: str, command: str | None, url: str | None) -> bool:
        """Whether a server so named, launched or reached matches this pattern."""
        if self.name is not None:
            return _glob(name, self.name)
        if self.command is not None:
            return command is not None and _glob(command, self.command)
        return url is not None and self.url is not None and _glob(url, self.url)


class ManagedPolicy(BaseModel):
    """The managed file's contents. Unknown keys are refused: a misspelt switch must not be ignored."""

    model_config = ConfigDict(extra="forbid")
    permissions: ManagedPermissions = Field(default_factory=ManagedPermissions)
    disable_allow_always: bool = False
    """No "always allow" answer, from any door; the dashboard does not offer it."""
    disable_auto_approve: bool = False
    """No session's auto-approve switch: turning it on is refused, and one already on answers nothing."""
    disable_approve_all: bool = False
    """`overseer run|resume|workflow run --approve all` is refused."""
    disable_unsandboxed: bool = False
    """No `sandbox: off`, and no command outside the sandbox (`outside_sandbox: true`)."""
    allowed_mcp_servers: list[ServerPattern] | None = None
    """The only MCP servers of the config that are started (None: any). Overseer's built-in
    servers are not MCP servers someone added, and are not filtered."""
    hooks: HooksConfig = Field(default_factory=lambda: HooksConfig({}))
    """Claude Code's `hooks` block (backend/domain/hook_config.py): hooks that always run, in front
    of the config file's (the host merges them with `merge_hooks`). Unlike the config file's, an
    event Overseer does not run hooks at is refused: a managed guard must never silently not run."""
    source: str = Field(default="", exclude=True)
    """The file it was read from, named in every refusal."""

    @field_validator("hooks")
    @classmethod
    def _events_that_run(cls, hooks: HooksConfig) -> HooksConfig:
        unknown = sorted(set(hooks.root) - HOOK_EVENTS)
        if unknown:
            raise ValueError(f"hook event {unknown[0]!r} is not one Overseer runs: {', '.join(sorted(HOOK_EVENTS))}")
        return hooks

    def rules(self) -> RuleSet:
        """The deny and ask rules, strictly parsed (a rule Overseer cannot read is an error here)."""
        return RuleSet.from_config(self.permissions.model_dump(), source=MANAGED_SOURCE, strict=True)

    def where(self, setting: str) -> str:
        """`locked by managed policy (FILE: SETTING)`: the words of every refusal."""
        return f"locked by managed policy ({self.source or 'managed policy'}: {setting})"

    def locked(self, setting: str) -> ManagedLocked:
        """The refusal for an attempt to loosen `setting`."""
        return ManagedLocked(self.where(setting))

    def check_switch(self, switch: ManagedSwitch, what: str) -> None:
        """ManagedLocked when `switch` is on: `what` (e.g. "always allow") is turned off."""
        if getattr(self, switch):
            raise ManagedLocked(f"{what} is turned off: {self.where(switch)}")

    def rule_named(self, rule: str) -> str | None:
        """The managed setting that holds `rule` word for word (`permissions.deny 'Bash(curl *)'`), or None."""
        for effect in ("deny", "ask"):
            if rule.strip() in (r.strip() for r in getattr(self.permissions, effect)):
                return f"permissions.{effect} {rule.strip()!r}"
        return None

    def check_allow_rules(self, rules: list[str]) -> None:
        """ManagedLocked for an allow rule written word for word as a managed deny or ask rule:
        an attempt to loosen it (it would not, as managed rules come first, but it says so)."""
        for rule in rules:
            setting = self.rule_named(rule)
            if setting is not None:
                raise self.locked(setting)

    def server_refusal(self, name: str, command: str | None, url: str | None) -> str | None:
        """Why the MCP server may not start, or None when it may (or no allow-list is set)."""
        if self.allowed_mcp_servers is None:
            return None
        if any(p.admits(name, command, url) for p in self.allowed_mcp_servers):
            return None
        allowed = "; ".join(p.text for p in self.allowed_mcp_servers) or "none"
        return f"MCP server {name!r} is not in allowed_mcp_servers ({allowed}): {self.where('allowed_mcp_servers')}"


def _glob(value: str, pattern: str) -> bool:
    # fnmatchcase: `*` and `?` as in a shell; case matters (server names and URLs are as written).
    return fnmatch.fnmatchcase(value, pattern)


NO_MANAGED_POLICY = ManagedPolicy()
"""No managed file: nothing locked."""
