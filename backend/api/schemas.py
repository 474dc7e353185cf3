"""Request and response bodies of the REST API (the domain models cover the rest)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.config import PolicyValue
from backend.domain.models import (
    AutoApproveScope,
    Decider,
    Decision,
    DecisionKind,
    EngineName,
    Message,
    Session,
    StandingScopeKind,
    ToolCallRecord,
)
from backend.domain.session_options import SessionOptions
from backend.domain.tool_pins import ToolChange
from backend.domain.tools import ServerType
from backend.app.chat import ChatInput, ImageInput


class Strict(BaseModel):
    """Unknown fields are a client bug worth a clear 422, not silence."""

    model_config = ConfigDict(extra="forbid")


class LoginRequest(Strict):
    username: str = Field(default="admin", max_length=200)
    password: str = Field(min_length=1, max_length=1000)


class TokenResponse(BaseModel):
    token: str


class ImageIn(Strict):
    name: str = Field(default="image", max_length=200)
    data: str = Field(min_length=1, max_length=8_000_000, description="base64 bytes")
    mime_type: str = Field(max_length=100)


class MessageExtras(Strict):
    attached_skills: list[str] = Field(default_factory=list, max_length=20)
    context_paths: list[str] = Field(default_factory=list, max_length=50)
    images: list[ImageIn] = Field(default_factory=list, max_length=10)

    def chat_input(self, text: str, *, author: Decider | None = None) -> ChatInput:
        return ChatInput(
            text=text,
            author=author,
            attached_skills=self.attached_skills,
            context_paths=self.context_paths,
            images=[ImageInput(name=i.name, data=i.data, mime_type=i.mime_type) for i in self.images],
        )


class CreateSession(MessageExtras):
    prompt: str | None = Field(default=None, max_length=200_000)
    mode: str | None = Field(default=None, min_length=1, max_length=100)
    """Default: the agent's mode, else `agent`."""
    agent: str | None = Field(default=None, min_length=1, max_length=100)
    """The named agent (issue 19); default: the `rest` route's, else main."""
    model: str | None = Field(default=None, max_length=200)
    engine: EngineName | None = None
    workspace: str | None = Field(default=None, max_length=4096)
    title: str | None = Field(default=None, max_length=200)
    instructions: str = Field(default="", max_length=50_000)

    def options(self, *, agent: str, created_by: Decider, chooses_workspace: bool = False) -> SessionOptions:
        """The new session's options: `agent` is the one the request is routed to (it names one, or
        a route's, or main), `created_by` who asked; `chooses_workspace`: they are no admin, so
        `workspace` must be one of the allowed workspaces (GET /api/workspaces)."""
        return SessionOptions(
            title=self.title,
            mode=self.mode,
            model=self.model,
            engine=self.engine,
            workspace=self.workspace,
            chooses_workspace=chooses_workspace,
            agent=agent,
            instructions=self.instructions,
            created_by=created_by,
        )


class SendMessage(MessageExtras):
    content: str = Field(min_length=1, max_length=200_000)


class EditSession(Strict):
    """PATCH /api/sessions/{id}: what to change (at least one); the rest stays as it is."""

    title: str | None = Field(default=None, max_length=1000)
    archived: bool | None = None
    auto_approve: bool | None = None
    """On: what this session's rules ask is allowed, in your name; a deny still denies."""
    approve_pending: bool = False
    """With auto_approve true: also allow the approvals already waiting in the session."""
    auto_approve_scope: AutoApproveScope | None = None
    """With auto_approve true: "workspace_edits" (file writes and edits inside the workspace) or
    "edits_and_commands" (every call the rules ask about); left out, "edits_and_commands"."""
    auto_approve_high_risk: bool = False
    """With auto_approve true: allow High-risk calls too; otherwise they still ask a person."""


class SessionDetail(Session):
    messages: list[Message]
    tool_calls: list[ToolCallRecord]
    last_seq: int


class AnswerApproval(Strict):
    decision: DecisionKind
    message: str | None = Field(default=None, max_length=10_000)
    updated_arguments: dict[str, Any] | None = None
    rules: list[str] | None = None
    scope: StandingScopeKind | None = None
    """For allow_always: `workspace` or `agent` (the session's own, a non-admin's only choice and
    default) or `global` (every session: admins only, and their default)."""

    def to_decision(self) -> Decision:
        return Decision(
            kind=self.decision,
            message=self.message,
            updated_arguments=self.updated_arguments,
            rules=self.rules,
            scope=self.scope,
        )


class PoliciesBody(Strict):
    policies: dict[str, PolicyValue]


class AuditPage(BaseModel):
    items: list[Any]
    limit: int
    offset: int
    sessions: dict[str, str] = Field(default_factory=dict)
    """The title of each session the page's rows name ("" once a session is deleted)."""


class InvokeRequest(Strict):
    prompt: str = Field(min_length=1, max_length=200_000)
    mode: str | None = Field(default=None, min_length=1, max_length=100)
    """Default: the agent's mode, else `agent`."""
    agent: str | None = Field(default=None, min_length=1, max_length=100)
    """The named agent (issue 19); default: the `rest` route's, else main."""
    model: str | None = Field(default=None, max_length=200)
    engine: EngineName | None = None
    parent_session_id: str | None = None
    fork: bool = False

    def options(self, *, agent: str | None) -> SessionOptions:
        """The new session's options: `agent` is the one the request is routed to (None: its parent's)."""
        return SessionOptions(
            mode=self.mode,
            model=self.model,
            engine=self.engine,
            agent=agent,
            parent_id=self.parent_session_id,
            fork=self.fork,
        )


class InvokeResponse(BaseModel):
    session_id: str
    response: str
    status: str
    cost_usd: float
    tokens: dict[str, int]


class DescriptionFlagView(BaseModel):
    """One reason a tool's text looks like instructions to the model (backend/domain/description_scan.py)."""

    kind: str
    reason: str
    where: str
    """`description`, or `parameter <name>`."""
    excerpt: str = ""


class ToolView(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]
    policy: PolicyValue | None
    """The policy set for this tool or its server, if any."""
    effective_policy: PolicyValue = "ask"
    """What a call matching no rule gets: the policy set, else allow for a read-only tool where
    `read_only_auto_allow` is on, else ask."""
    changed: ToolChange | None = None
    """The tool's definition differs from the one pinned (issue 34): every call asks until an
    admin accepts it (`POST /api/servers/{name}/tools/{tool}/accept`)."""
    flags: list[DescriptionFlagView] = Field(default_factory=list)
    """Why the tool's description or a parameter's reads like instructions to the model (issue 34):
    the gateway does not re-export a flagged tool."""


class ServerView(BaseModel):
    name: str
    state: Literal["starting", "ready", "error", "stopped"]
    error: str | None
    tools: list[ToolView]
    restarts: int = 0
    """Restarts after a crash or a hang since the host started."""
    last_restart: str | None = None
    """Why it was last restarted ("crashed (exit code 1)", "stopped answering ...")."""
    type: ServerType = "stdio"
    """How Overseer reaches it (`stdio`, or a remote transport)."""
    url: str | None = None
    """A remote server's address, without credentials."""
    last_http_error: str | None = None
    """A remote server's last HTTP error, where the status has one."""
    needs_sign_in: bool = False
    """A remote server that refused Overseer for want of an OAuth sign-in (Sign in, or `overseer mcp login`)."""
    builtin: bool = False
    """One of Overseer's own servers: it can be restarted, not edited or removed."""
    enabled: bool = True
    editable: bool = False
    """A person's server from the config file: admins may edit, disable and remove it."""
    confinement: str = ""
    """What confines it, in a sentence: the shell's per-command sandbox, a `sandbox:` entry, or nothing."""


class ServerEntryBody(Strict):
    """A server as an `mcpServers` entry of the config file (validated as the file would be)."""

    entry: dict[str, Any]


class NewServerBody(ServerEntryBody):
    name: str = Field(min_length=1, max_length=40)


class ServerEntryView(BaseModel):
    name: str
    entry: dict[str, Any]
    """Literal `env` and `headers` values show as `********`; sent back so, they are kept."""


class ServerLogView(BaseModel):
    name: str
    lines: list[str]
