"""Approvals put to the MCP client as elicitations; the first answer wins.

An approval inside an invoked agent waits in the ApprovalBroker as always (the dashboard sees
it). When the client can elicit, it is asked too, and whichever answer lands first is applied:
the broker applies an answer exactly once and refuses later ones.

The protocol era decides how the client is asked:
- handshake era (<= 2025-11-25): `elicitation/create` is sent while the tool call runs
  (`PushAsker`). When the dashboard answers first, the request is cancelled, which sends the
  client `notifications/cancelled`: its prompt is withdrawn.
- 2026-07-28: a tool cannot send requests mid-call, so `invoke_agent` returns an
  `InputRequiredResult` carrying the question (`input_request`) and the client retries with its
  answer. A prompt already handed over cannot be withdrawn; a late answer is ignored.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, Protocol

import anyio
import mcp_types as wire
from mcp.server.context import ServerRequestContext
from mcp.server.elicitation import AcceptedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel, Field, ValidationError

from backend.app.approvals import ApprovalService
from backend.auth import Principal
from backend.domain.errors import ApprovalError, DomainError
from backend.domain.models import Approval, Decision
from backend.domain.sampling import prompt_text as sampling_prompt_text

log = logging.getLogger(__name__)

ARGUMENTS_SHOWN = 2000
RELATED_TASK = "io.modelcontextprotocol/related-task"


class ApprovalAnswer(BaseModel):
    """The form a client shows for one approval."""

    decision: Literal["allow_once", "allow_session", "deny"] = Field(
        description="allow_once: run this call; allow_session: run it and calls like it in this "
        "session; deny: refuse it (the agent is told)"
    )
    message: str = Field(default="", description="Optional: a note for the agent, e.g. why you deny it")


APPROVAL_SCHEMA: dict[str, Any] = render_elicitation_schema(ApprovalAnswer)


def client_elicits(ctx: Context) -> bool:
    """Whether the client declared form elicitation (an empty `elicitation: {}` means form)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


ASKED_KINDS = ("tool", "elicitation", "sampling")
"""The approvals an invoking client is asked: tool calls, MCP servers' own questions (passed on as
they are) and their requests to run the session's model (allowed or denied as a tool call is)."""


def schema_of(approval: Approval) -> dict[str, Any]:
    """The form the client shows: the approval form, or the server's own for its question."""
    if approval.kind == "elicitation":
        return dict(approval.arguments.get("schema") or {"type": "object", "properties": {}})
    return APPROVAL_SCHEMA


def question(approval: Approval) -> str:
    """What the client shows: the tool, its arguments, why it asks, and where else it can be answered."""
    if approval.kind == "elicitation":
        return (
            f"The MCP server {approval.arguments.get('server')!r}, running {approval.tool_name} for an Overseer "
            f"agent, asks:\n{approval.arguments.get('message', '')}\n\n"
            f"(session {approval.session_id}, approval {approval.id}; the first answer counts, "
            "here or on the Overseer dashboard)"
        )
    if approval.kind == "sampling":
        return (
            f"The MCP server {approval.arguments.get('server')!r}, running {approval.tool_name} for an Overseer "
            f"agent, asks to run the model {approval.arguments.get('model')!r} on this prompt:\n"
            f"{sampling_prompt_text(approval.arguments)[:ARGUMENTS_SHOWN]}\n\n"
            f"(session {approval.session_id}, approval {approval.id}; allowing runs it once; the first answer "
            "counts, here or on the Overseer dashboard, where the prompt can also be edited)"
        )
    arguments = json.dumps(approval.arguments, indent=2, ensure_ascii=False)
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[:ARGUMENTS_SHOWN] + "\n... (cut; see the dashboard for all of it)"
    why = f"\nWhy it asks: {approval.reason}" if approval.reason else ""
    return (
        f"An Overseer agent wants to run {approval.tool_name} with:\n{arguments}{why}\n\n"
        f"(session {approval.session_id}, approval {approval.id}; the first answer counts, "
        "here or on the Overseer dashboard)"
    )


def decision_from(action: str, content: dict[str, Any] | None, *, kind: str = "tool") -> Decision | None:
    """The decision a client's answer means; None when it gave none (cancelled, or a bad form).

    A server's question passes the client's answer on as it is: accept with its content (the
    approval door checks it against the server's schema), decline, or cancel.
    """
    if kind == "elicitation":
        if action == "accept":
            return Decision(kind="allow_once", updated_arguments=dict(content or {}))
        return Decision(kind="deny" if action == "decline" else "cancel")
    if action == "decline":
        return Decision(kind="deny", message="Declined in the MCP client.")
    if action != "accept":
        return None
    try:
        answer = ApprovalAnswer.model_validate(content or {})
    except ValidationError:
        log.info("ignored an elicitation answer that does not fit the approval form")
        return None
    if kind == "sampling" and answer.decision != "deny":
        return Decision(kind="allow_once")  # a sampling request is allowed one request at a time
    return Decision(kind=answer.decision, message=answer.message or None)


async def answer_first(approvals: ApprovalService, approval_id: str, decision: Decision, by: Principal) -> bool:
    """Apply the client's answer (as `by`) unless someone answered first; True when it was applied."""
    try:
        await approvals.answer(approval_id, decision, by=by, via="elicitation")
    except (ApprovalError, DomainError) as exc:
        log.info("elicitation answer to %s not applied: %s", approval_id, exc)
        return False
    return True


class Asker(Protocol):
    """Puts one approval to the client and applies its answer (handshake era)."""

    async def ask(self, approval: Approval) -> None: ...


class PushAsker:
    """Handshake era: ask the client while the tool call runs; cancel the ask to withdraw it."""

    def __init__(self, ctx: Context, approvals: ApprovalService, by: Principal) -> None:
        self._ctx = ctx
        self._approvals = approvals
        self._by = by

    async def ask(self, approval: Approval) -> None:
        """Ask once and apply the answer, if any and if still wanted."""
        try:
            if approval.kind == "elicitation":
                raw = await self._ctx.request_context.session.elicit_form(
                    question(approval), schema_of(approval), related_request_id=self._ctx.request_id
                )
                result: Any = None
            else:
                result = await self._ctx.elicit(question(approval), ApprovalAnswer)
        except (MCPError, ValueError) as exc:
            # The client could not or would not answer; the dashboard still can.
            log.info("elicitation for approval %s failed: %s", approval.id, exc)
            return
        if result is None:
            decision = decision_from(raw.action, dict(raw.content or {}), kind="elicitation")
        elif isinstance(result, AcceptedElicitation):
            decision = decision_from("accept", result.data.model_dump(), kind=approval.kind)
        else:
            decision = decision_from(result.action, None)
        if decision is not None:
            # Once the person answered, a withdrawal must not cut the answer off half-applied.
            with anyio.CancelScope(shield=True):
                await answer_first(self._approvals, approval.id, decision, self._by)


class TaskAsker:
    """2025-11-25 tasks: ask while the client waits on `tasks/result` for the task, as the spec's
    `input_required` flow has it; each question is tagged with its task (`related-task`)."""

    def __init__(
        self, ctx: ServerRequestContext[Any, Any], approvals: ApprovalService, by: Principal, *, task_id: str
    ) -> None:
        self._ctx = ctx
        self._approvals = approvals
        self._by = by
        self._task_id = task_id

    async def ask(self, approval: Approval) -> None:
        """Ask once and apply the answer, if any and if still wanted."""
        meta: wire.RequestParamsMeta = {RELATED_TASK: {"taskId": self._task_id}}  # type: ignore[typeddict-unknown-key]
        request = wire.ElicitRequest(
            params=wire.ElicitRequestFormParams(
                message=question(approval), requested_schema=schema_of(approval), _meta=meta
            )
        )
        try:
            raw = await self._ctx.session.send_request(
                request, wire.ElicitResult, metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id)
            )
        except (MCPError, ValueError) as exc:
            log.info("elicitation for approval %s failed: %s", approval.id, exc)
            return
        decision = decision_from(raw.action, dict(raw.content or {}), kind=approval.kind)
        if decision is not None:
            with anyio.CancelScope(shield=True):
                await answer_first(self._approvals, approval.id, decision, self._by)


def input_request(approval: Approval) -> wire.ElicitRequest:
    """2026-07-28: the question for one approval, to ride an InputRequiredResult."""
    return wire.ElicitRequest(
        params=wire.ElicitRequestFormParams(message=question(approval), requested_schema=schema_of(approval))
    )


def decision_from_response(response: object, *, kind: str = "tool") -> Decision | None:
    """2026-07-28: the decision in a client's input response, if it is an elicitation answer."""
    if not isinstance(response, wire.ElicitResult):
        return None
    return decision_from(response.action, dict(response.content) if response.content else None, kind=kind)
