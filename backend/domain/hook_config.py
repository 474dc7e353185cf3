"""Hooks as configured: Claude Code's `hooks` block, read as it is (issue 34, item 1).

The same shape in `overseer.yaml` (`hooks:`) as in a pasted `.claude/settings.json`:

    hooks:
      PreToolUse:
        - matcher: "Bash|mcp__shell__exec"
          hooks:
            - {type: command, command: "$CLAUDE_PROJECT_DIR/.claude/hooks/lint.sh", timeout: 10}
            - {type: http, url: "http://127.0.0.1:9000/hook", timeout: 5}

Pure values: what runs them is backend/approvals/hook_runner.py, what their answers mean is
backend/approvals/configured_hooks.py.
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

log = logging.getLogger(__name__)

HookEvent = Literal[
    "PreToolUse", "PostToolUse", "PermissionRequest", "UserPromptSubmit", "SessionStart", "Stop", "Notification"
]
"""The events Overseer runs hooks at. Claude Code has more (SubagentStop, PreCompact, ...): a
pasted block naming one still loads, and its hooks are skipped with a warning."""
HOOK_EVENTS: frozenset[str] = frozenset(get_args(HookEvent))
TOOL_EVENTS: frozenset[str] = frozenset({"PreToolUse", "PostToolUse", "PermissionRequest"})
"""Events whose matcher is read against a tool's name."""
MATCHED_EVENTS: frozenset[str] = TOOL_EVENTS | {"SessionStart", "Notification"}
"""Events that read a matcher at all (SessionStart its source, Notification its type)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a handler may take when it names no `timeout` (Claude Code's default)."""
_PLAIN = re.compile(r"^[A-Za-z0-9_|-]*$")


class CommandHook(BaseModel):
    """`{type: command, command, timeout}`: a shell command run with the event's JSON on stdin."""

    model_config = ConfigDict(extra="ignore")  # Claude Code adds fields (statusMessage, ...) we need not read
    type: Literal["command"]
    command: str = Field(min_length=1)
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Seconds before the command is killed; for PreToolUse a timeout denies the call."""

    @property
    def principal(self) -> str:
        """Who decided, as audit rows and tool cards name a hook."""
        return f"hook:{self.command}"


class HttpHook(BaseModel):
    """`{type: http, url, timeout, headers}`: the event's JSON POSTed to a URL; the reply is read
    like a command's stdout (a 2xx), anything else is the hook failing."""

    model_config = ConfigDict(extra="ignore")
    type: Literal["http"]
    url: str = Field(pattern=r"^https?://")
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)

    @property
    def principal(self) -> str:
        return f"hook:{self.url}"


HookHandler = Annotated[CommandHook | HttpHook, Field(discriminator="type")]
"""Claude Code's `prompt`, `agent` and `mcp_tool` handler types are refused at load: a guard
that would silently never run is worse than a configuration error."""


class HookMatcherGroup(BaseModel):
    """One entry of an event's list: a matcher and the handlers it runs."""

    model_config = ConfigDict(extra="ignore")
    matcher: str = ""
    """For tool events, the tool's name: exact (`Bash`), alternatives (`Edit|Write`) or a regex
    (`mcp__memory__.*`), read against the Claude Code alias (Bash, Read, Edit, Write, ...) and
    our own `mcp__server__tool` name; empty or `*`: every tool. SessionStart matches its source
    (`startup`), Notification its type (`permission_prompt`); the others have none."""
    hooks: list[HookHandler] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _matcher_compiles(cls, value: str) -> str:
        if not _PLAIN.match(value) and value != "*":
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"matcher {value!r} is not a regular expression: {exc}") from None
        return value

    def matches(self, *names: str) -> bool:
        """Whether the matcher selects any of `names` (a tool's alias and full name)."""
        if self.matcher in ("", "*"):
            return True
        if _PLAIN.match(self.matcher):
            wanted = set(self.matcher.split("|"))
            return any(n in wanted for n in names)
        pattern = re.compile(self.matcher)
        return any(pattern.fullmatch(n) for n in names)


class HooksConfig(RootModel[dict[str, list[HookMatcherGroup]]]):
    """The `hooks` block: event name -> matcher groups."""

    root: dict[str, list[HookMatcherGroup]] = Field(default_factory=dict)

    @field_validator("root")
    @classmethod
    def _known_events(cls, value: dict[str, list[HookMatcherGroup]]) -> dict[str, list[HookMatcherGroup]]:
        for event in value:
            if event not in HOOK_EVENTS:
                log.warning("hooks: %s is not an event Overseer runs hooks at; its hooks are skipped", event)
        return value

    def groups(self, event: HookEvent) -> list[HookMatcherGroup]:
        return self.root.get(event, [])

    def handlers(self, event: HookEvent, *names: str) -> list[CommandHook | HttpHook]:
        """The handlers an event runs for `names` (a tool's alias and name, a source, a type);
        for an event without matchers, all of them."""
        groups = self.groups(event)
        if event in MATCHED_EVENTS:
            groups = [g for g in groups if g.matches(*names)]
        return [h for g in groups for h in g.hooks]


def merge_hooks(*configs: HooksConfig | None) -> HooksConfig:
    """Several `hooks` blocks as one, each event's groups in the order given (a managed policy's
    "hooks that always run" first, then the config file's): every matching handler runs."""
    merged: dict[str, list[HookMatcherGroup]] = {}
    for config in configs:
        if config is None:
            continue
        for event, groups in config.root.items():
            merged.setdefault(event, []).extend(groups)
    return HooksConfig(merged)
