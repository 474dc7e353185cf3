"""What the gateway's tools return: small, stable views of sessions, messages and approvals.

Structured content for the client, and the same data as JSON text for the model that reads it.
Long message texts are cut: `get_session` is for looking in, the dashboard for reading all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from backend.domain.models import Approval, Message, Session

MESSAGE_TEXT_LIMIT = 4000


class SessionView(BaseModel):
    """One session, without its transcript."""

    id: str
    title: str
    status: str
    mode: str
    model: str
    origin: str
    parent_id: str | None = None
    workspace: str
    error: str | None = None
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, session: Session) -> SessionView:
        return cls(
            id=session.id,
            title=session.title,
            status=session.status,
            mode=session.mode,
            model=session.model,
            origin=session.origin,
            parent_id=session.parent_id,
            workspace=session.workspace,
            error=session.error,
            cost_usd=session.usage.cost_usd,
            input_tokens=session.usage.input_tokens,
            output_tokens=session.usage.output_tokens,
            created_at=session.created_at,
            updated_at=session.updated_at,
        )


class ToolCallView(BaseModel):
    """A tool call an assistant message asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class MessageView(BaseModel):
    """One transcript entry; `content` is cut at MESSAGE_TEXT_LIMIT characters (`truncated`)."""

    idx: int
    role: str
    content: str
    truncated: bool = False
    tool_calls: list[ToolCallView] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    created_at: datetime

    @classmethod
    def of(cls, message: Message) -> MessageView:
        return cls(
            idx=message.idx,
            role=message.role,
            content=message.content[:MESSAGE_TEXT_LIMIT],
            truncated=len(message.content) > MESSAGE_TEXT_LIMIT,
            tool_calls=[
                ToolCallView(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
            ],
            tool_call_id=message.tool_call_id,
            name=message.name,
            is_error=message.is_error,
            created_at=message.created_at,
        )


class ApprovalView(BaseModel):
    """An approval: what waits (or waited) for a person, and the answer once there is one."""

    id: str
    session_id: str
    kind: str
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""
    always_rules: list[str] = Field(default_factory=list)
    """What allow_always would write: the narrow rules of this call (none: only an admin may)."""
    always_scope: str = ""
    """Where a non-admin's allow_always keeps them (`workspace ~/x`, `agent docs`); an admin's
    goes to every session."""
    status: str
    decision: str | None = None
    message: str | None = None
    decided_by: str | None = None
    created_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, approval: Approval) -> ApprovalView:
        return cls(
            id=approval.id,
            session_id=approval.session_id,
            kind=approval.kind,
            tool_name=approval.tool_name,
            arguments=approval.arguments,
            reason=approval.reason,
            always_rules=approval.suggested_rules,
            always_scope=approval.always_scope.label if approval.always_scope else "",
            status=approval.status,
            decision=approval.decision.kind if approval.decision else None,
            message=approval.decision.message if approval.decision else None,
            decided_by=approval.decided_by,
            created_at=approval.created_at,
            expires_at=approval.expires_at,
        )


class SessionList(BaseModel):
    """`list_sessions`: newest first."""

    sessions: list[SessionView]


class SessionDetail(BaseModel):
    """`get_session`: the session, its last messages and its open approvals."""

    session: SessionView
    messages: list[MessageView]
    pending_approvals: list[ApprovalView]


class ApprovalList(BaseModel):
    """`list_pending_approvals`: oldest first."""

    approvals: list[ApprovalView]
