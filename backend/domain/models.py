"""The wire models: what is persisted, streamed and returned by the API."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from backend.domain.media import MediaFile
from backend.domain.tool_pins import ToolChange
from backend.domain.stakes import CarriedResult, Stake
from backend.domain.tools import ToolAnnotations

SessionStatus = Literal["idle", "running", "waiting_approval", "completed", "stopped", "error"]
ACTIVE_STATUSES: frozenset[str] = frozenset({"running", "waiting_approval"})
StopReason = Literal["denied", "timed_out", "budget"]
"""Why a session's last run ended short of its work: a person denied its last step, an approval
timed out, or a spending budget was reached (see `Session.stop_reason`)."""

EngineName = Literal["litellm", "claude-sdk"]
"""What drives a session: our own loop over LiteLLM, or Claude Code's through claude-agent-sdk."""

SessionOrigin = Literal["user", "api", "cron", "agent", "workflow", "mcp", "telegram", "heartbeat"]
"""Who started a session: a person, a program (REST), a schedule, a parent agent, a workflow, an MCP client,
a person writing to the Telegram bot, or the heartbeat (HEARTBEAT.md on a schedule)."""

Role = Literal["system", "user", "assistant", "tool"]

ToolCallStatus = Literal["pending", "waiting_approval", "running", "done", "error", "denied", "interrupted", "stopped"]

ApprovalStatus = Literal["pending", "allowed", "denied", "expired", "cancelled"]
DecisionKind = Literal["allow_once", "allow_session", "allow_always", "deny", "cancel"]
"""`cancel` answers only an elicitation: the person dismissed the question without deciding."""
DecidedBy = Literal["rule", "policy", "user", "timeout", "hook", "stop"]
StandingScopeKind = Literal["workspace", "agent", "global"]
"""Where an "always allow" rule is kept: for the sessions of one workspace, of one named agent, or
for every session (the global policy, which only an admin may write)."""
ApprovalKind = Literal["tool", "mode_switch", "workflow_step", "elicitation", "sampling", "network", "unconfined"]
"""What an approval gates: a tool call, a plan's switch to its next mode, a workflow's next step,
a server's question to the person (`elicitation/create`: accept with content, decline, cancel),
or a server's request to run the session's model on its prompt (`sampling/createMessage`)."""

EventType = Literal[
    # a session's life
    "session.created",  # data: the Session
    "session.status",  # status, error
    "session.mode",  # mode
    "session.updated",  # the changed fields of a person's edit: title, archived, auto_approve
    "session.cleared",  # from: the first message idx the model sees after /new
    "session.recovered",  # status, after a restart
    # the conversation
    "message",  # a persisted Message (user, assistant, tool)
    "token",  # ephemeral: text of a streaming answer
    "thinking.delta",  # ephemeral: text of the model's reasoning as it streams, before its answer
    "usage",  # tokens and cost of a model call
    "model.retry",  # message: why the model call is retried
    "budget.warning",  # limit (session | daily), spent_usd, budget_usd, message: a budget is nearly spent
    "error",  # message: why the run failed
    "notice",  # command, text: what a chat command did
    "memory.consolidated",  # upto, facts
    # tools and approvals
    "tool.started",
    "tool.result",
    "tool.progress",  # ephemeral: id (the call), progress, total, message: what a running tool reported
    "approval.requested",  # data: the Approval
    "approval.resolved",  # id, status, decision, decided_by, decider
    "server.failed",  # server, error (with the end of its log): its tools are left out
    "sampling.completed",  # server, model, text, usage, edited: a server's allowed request answered by the model
    # checkpoints (issue 32)
    "checkpoint.created",  # step, id (the call), name, commit (None: none was taken), skipped, error
    "checkpoint.rewound",  # step, restored, checkpoint_step, forked_session_id, by: a person restored the workspace
    # workflows
    "workflow.step",
    "workflow.gate",
    "workflow.finished",
]
"""Every kind of event there is: a closed set. The dashboard, the terminal and the gateway switch on
these names, so a new kind is added here first (and `EventBus.publish` refuses any other)."""
EVENT_TYPES: frozenset[str] = frozenset(get_args(EventType))

PrincipalKind = Literal["token", "user", "api_key", "local", "system"]
"""How a decider proved who they are: the single-user token, a login, an API key, being the
person at this machine's terminal (or the stdio MCP client they started), or Overseer itself."""
Door = Literal["rest", "websocket", "mcp", "elicitation", "terminal", "workflow", "channel", "core", "auto"]
"""Through which door a decision came in; `core` for the ones Overseer makes itself, `auto` for a
session's auto-approve switch, answering on the word of whoever turned it on."""


def utcnow() -> datetime:
    """Timezone-aware now; every timestamp we store is UTC."""
    return datetime.now(UTC)


class Usage(BaseModel):
    """Tokens and cost of a session so far. Unknown models cost 0 but their tokens count."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def plus(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class Session(BaseModel):
    """One conversation of one agent in one workspace."""

    id: str
    title: str = ""
    status: SessionStatus = "idle"
    mode: str = "agent"
    model: str = ""
    engine: EngineName = "litellm"
    sdk_session_id: str | None = None
    """The Claude Agent SDK's own session id (claude-sdk engine): its next run resumes it."""
    workspace: str
    agent_id: str = "main"
    """The named agent it belongs to (issue 19): whose workspace, servers and rules it works with."""
    parent_id: str | None = None
    origin: SessionOrigin = "user"
    schedule_id: str | None = None
    """The cron job that started it, when `origin` is "cron"."""
    workflow_run_id: str | None = None
    """The workflow run it is a step of, when `origin` is "workflow"."""
    error: str | None = None
    stop_reason: StopReason | None = None
    """Set when the last run ended short of its work (kept in the row's JSON, no migration): a
    person denied (or let time out) its last step, the run then answering "completed", or a
    budget stopped it ("stopped"). A new run clears it."""
    usage: Usage = Field(default_factory=Usage)
    instructions: str = ""
    """The session's own instructions: the last part of its system prompt, so they win."""
    session_rules: list[str] = Field(default_factory=list)
    """Allow rules granted "for this session"; persisted so they survive a restart."""
    found_tools: list[str] = Field(default_factory=list)
    """Tools `search_tools` added to what the model is shown (tool selection, past
    `tool_selection.max_tools`); persisted so they stay offered after a restart. Offered, not allowed."""
    created_by: Decider | None = None
    """Who created it through the API: its owner, who (with admins) may rename, archive and
    auto-approve it. None for sessions Overseer started (cron, workflows, sub-agents): admins only."""
    archived: bool = False
    """Hidden from the dashboard's list unless asked for; an active session cannot be archived."""
    auto_approve: AutoApprove | None = None
    """While set, what this session's rules ask is allowed, in the name of whoever turned it on."""
    memory_from: int = 0
    """Messages with idx below it are no longer sent to the model: consolidated into the
    workspace memory, or cleared by `/new`."""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ToolCallRequest(BaseModel):
    """A tool call as the model asked for it (OpenAI wire shape, arguments already parsed)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    argument_error: str | None = None
    """Set when the arguments could not be parsed or repaired; the call is not run."""


AttachmentKind = Literal["file", "directory", "skill", "image"]


class Attachment(BaseModel):
    """Something a person gave along with a message, captured when it was sent.

    Files, folder trees and skills are read once, at send time: the transcript records exactly
    what the model was shown, and the model is shown the same thing on every later turn.
    """

    kind: AttachmentKind
    name: str
    """The path as the person gave it, the skill's name, or the image's file name."""
    text: str = ""
    """What the model reads: the file's text, the tree listing, the skill's SKILL.md body."""
    data: str | None = None
    """Base64 bytes of an image."""
    mime_type: str | None = None


class SignedThinking(BaseModel):
    """A reasoning block as Anthropic returns it: its text and signature, or encrypted `data`.

    Anthropic requires such blocks back, unmodified, while their assistant turn's tool loop goes
    on (with thinking enabled); once the model has answered, they are never sent again."""

    type: Literal["thinking", "redacted_thinking"]
    thinking: str = ""
    signature: str = ""
    data: str = ""
    """A `redacted_thinking` block's encrypted content."""

    def wire(self) -> dict[str, str]:
        """The block as the Messages API takes it back."""
        if self.type == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


class Message(BaseModel):
    """One transcript entry, in the OpenAI chat shape LiteLLM speaks."""

    session_id: str
    idx: int = 0
    role: Role
    content: str = ""
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    attachments: list[Attachment] = Field(default_factory=list)
    media: list[MediaFile] = Field(default_factory=list)
    """A tool message's images and audio, kept as files (see `backend.store.media`)."""
    thinking: str = ""
    """An assistant message's reasoning, whole, for the person: never sent back to the model."""
    author: Decider | None = None
    """A user message's author, through which door (None: Overseer itself, or written before
    authors were kept). Auto-approve covers only turns its owner's messages started."""
    thinking_blocks: list[SignedThinking] = Field(default_factory=list)
    """Its signed Anthropic blocks, echoed only within their own tool loop (`backend.engine.models.thinking`)."""
    created_at: datetime = Field(default_factory=utcnow)


class ToolCallRecord(BaseModel):
    """The life of one tool call, from the model's request to its result."""

    id: str
    session_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: ToolCallStatus = "pending"
    decision: str | None = None
    """What let it run or stopped it, e.g. "allow_once (user)" or "deny rule Bash(rm *) (user)"."""
    result: str | None = None
    is_error: bool = False
    media: list[MediaFile] = Field(default_factory=list)
    """The images and audio of the result, as its tool message keeps them."""
    untrusted: str | None = None
    """Where the result's outside text came from, when it is outside text (issue 34, item 5)."""
    task_id: str | None = None
    """The MCP server's task while the tool runs as one (issue 35, item 6): kept so that after a
    restart the task's result is fetched instead of the tool being called again."""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class Decider(BaseModel):
    """Who made a decision and through which door: recorded on the approval and its audit row."""

    name: str
    kind: PrincipalKind
    role: str | None = None
    via: Door = "core"

    @property
    def label(self) -> str:
        """One line for logs and the dashboard, e.g. `ann (user, via rest)`."""
        return f"{self.name} ({self.kind}, via {self.via})"


OVERSEER = Decider(name="overseer", kind="system", via="core")
"""The decider of rules, policies, hooks, timeouts and stops."""


AutoApproveScope = Literal["workspace_edits", "edits_and_commands"]
"""What auto-approve covers: file writes and edits inside the workspace (like Claude Code's
accept-edits), or every tool call the rules ask about (commands too)."""


class AutoApprove(BaseModel):
    """A session's auto-approve switch, on: who turned it on (and through which door), when, and
    what it covers.

    Each call the rules would ask about and the scope covers is allowed once in their name (their
    audit rows say `via auto`); a deny is never overridden, since only an ask reaches a person at
    all. A High-risk call (backend/rules/risk.py) still asks unless `high_risk` was chosen.
    A switch stored before scopes existed reads as "edits_and_commands" without High risk.
    """

    by: Decider
    since: datetime = Field(default_factory=utcnow)
    scope: AutoApproveScope = "edits_and_commands"
    high_risk: bool = False
    """Whether High-risk calls are allowed too (the person chose "also High-risk")."""


Session.model_rebuild()  # its owner and switch name the two models above; subclasses need them resolved


class Decision(BaseModel):
    """A person's (or a timeout's) answer to an approval."""

    kind: DecisionKind
    message: str | None = None
    updated_arguments: dict[str, Any] | None = None
    rules: list[str] | None = None
    """For allow_always / allow_session: the rules to add; None means the narrowest rule for the call."""
    scope: StandingScopeKind | None = None
    """For allow_always: where the rules are kept. None: the session's own scope (its named agent's,
    else its workspace's) for a non-admin, the global policy for an admin. Only an admin may say
    "global"; the approval door fills it in before the approval closes."""

    @property
    def allows(self) -> bool:
        return self.kind not in ("deny", "cancel")


class StandingScope(BaseModel):
    """The sessions an "always allow" rule covers: one workspace's, one named agent's, or all of them."""

    kind: StandingScopeKind
    name: str = ""
    """The workspace's absolute path or the agent's id; "" for global."""
    label: str = ""
    """How a person reads it: `workspace ~/x`, `agent docs`, `every session (global policy)`."""

    @classmethod
    def of_session(cls, workspace: str | Path, agent_id: str | None) -> StandingScope:
        """A session's own scope: its named agent's when it runs one, else its workspace's."""
        if agent_id and agent_id != "main":
            return cls(kind="agent", name=agent_id, label=f"agent {agent_id}")
        path = os.path.normpath(str(workspace))
        home = str(Path.home())
        shown = "~" + path[len(home) :] if path == home or path.startswith(home.rstrip("/") + "/") else path
        return cls(kind="workspace", name=path, label=f"workspace {shown}")


class Approval(BaseModel):
    """A paused tool call (or a gate between modes or workflow steps) waiting for a person.

    A gate has no tool call: `tool_call_id` is then a key unique to the gate, `tool_name` says
    what would happen ("switch_mode", "workflow_step") and `arguments` is what the person may
    edit before allowing it.
    """

    id: str
    session_id: str
    kind: ApprovalKind = "tool"
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    reason: str = ""
    """Why it asks: the rule or policy that produced `ask`."""
    suggested_rules: list[str] = Field(default_factory=list)
    """What "always allow" would write: the narrowest rules covering the call."""
    always_scope: StandingScope | None = None
    """Where a non-admin's "always allow" keeps them: the session's named agent, else its workspace
    (an admin's goes to the global policy unless the decision says otherwise)."""
    tool_change: ToolChange | None = None
    """The tool's definition differs from the one pinned (issue 34): the change, for the card's diff."""
    stakes: list[Stake] = Field(default_factory=list)
    """What the call puts at stake by its tool's annotations, most dangerous first (issue 34)."""
    carried_results: list[CarriedResult] = Field(default_factory=list)
    """Arguments that carry text from an earlier tool result of the session (issue 34)."""
    argument_rules: list[str] = Field(default_factory=list)
    """Standing rules narrowed by one argument (`tool(to:ops@example.com)`), offered besides
    `suggested_rules` for an MCP tool (issue 34)."""
    status: ApprovalStatus = "pending"
    decision: Decision | None = None
    decided_by: DecidedBy | None = None
    decider: Decider | None = None
    """Who answered (a person, an API key, an MCP client; Overseer for rules and timeouts)."""
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime
    decided_at: datetime | None = None


class AuditEntry(BaseModel):
    """One permission decision, whoever made it."""

    id: int | None = None
    session_id: str
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    decision: Literal["allow", "deny"]
    decided_by: DecidedBy
    decider: Decider = OVERSEER
    """Who decided: the person (and door) for an answered approval, else Overseer itself."""
    detail: str = ""
    latency_ms: float = 0.0
    created_at: datetime = Field(default_factory=utcnow)

    @classmethod
    def of(
        cls,
        record: ToolCallRecord,
        decision: Literal["allow", "deny"],
        by: DecidedBy,
        detail: str,
        latency_ms: float = 0.0,
        decider: Decider = OVERSEER,
    ) -> AuditEntry:
        """The audit row of a decision on one tool call."""
        return cls(
            session_id=record.session_id,
            tool_call_id=record.id,
            tool_name=record.name,
            arguments=dict(record.arguments),
            decision=decision,
            decided_by=by,
            decider=decider,
            detail=detail,
            latency_ms=latency_ms,
        )


class Event(BaseModel):
    """One thing that happened in a session, as the dashboard and the CLI see it.

    Persisted events have a gapless per-session `seq`. Token deltas are ephemeral: they carry
    the seq of the last persisted event and an increasing `part`, and live only in memory.
    """

    session_id: str
    seq: int
    type: EventType
    data: dict[str, Any] = Field(default_factory=dict)
    part: int = 0
    ephemeral: bool = False
    created_at: datetime = Field(default_factory=utcnow)
