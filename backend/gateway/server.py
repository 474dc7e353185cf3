"""The gateway's MCP server: invoke agents, read sessions, answer approvals, and (opt-in) the host's tools.

Tools:
- `invoke_agent(prompt, mode?, session_id?, engine?)` runs an agent to its end: final text plus
  structured content (session id, status, cost, tokens), progress while it runs, approvals put
  to the client when it can elicit; a client cancellation stops the session.
- `list_sessions(status?)`, `get_session(id, last_n?)`, `list_pending_approvals` (viewer).
- `answer_approval(id, decision, message?, updated_arguments?)` (approver).
- With `expose_tools`, every pool tool under its `mcp__server__tool` name, through the gate.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any, Literal

import anyio
import mcp_types as wire
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from backend.app.services import AppServices
from backend.domain.errors import ApprovalNotFound, DomainError, NotFound
from backend.domain.models import Decision, EngineName, SessionStatus
from backend.gateway.callers import CallerOf, local_caller, require
from backend.gateway.elicitation import (
    PushAsker,
    answer_first,
    client_elicits,
    decision_from_response,
    input_request,
)
from backend.gateway.exposed import ExposedTools
from backend.gateway.invocation import Watch, final_result, start_invocation
from backend.gateway.progress import RequestProgress
from backend.gateway.task_extension import TasksExtension
from backend.gateway.task_methods import TASK_TOOL, TaskMethods
from backend.gateway.tasks import GatewayTasks
from backend.gateway.views import (
    ApprovalList,
    ApprovalView,
    MessageView,
    SessionDetail,
    SessionList,
    SessionView,
)

log = logging.getLogger(__name__)

STOP_TIMEOUT = 10.0

INSTRUCTIONS = (
    "Overseer runs AI agents whose tool calls pass a permission policy and wait for a person's "
    "approval when the policy says ask. invoke_agent hands a self-contained task to an Overseer "
    "agent and returns its final answer; approvals it needs are asked here when this client "
    "supports elicitation, and can always be answered on the Overseer dashboard or with "
    "answer_approval. list_sessions and get_session look at what agents did."
)

READ_ONLY = wire.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
RUNS_AN_AGENT = wire.ToolAnnotations(
    title="Invoke an Overseer agent", read_only_hint=False, destructive_hint=False, open_world_hint=True
)
# Answering can let a destructive call run: clients should ask their person first.
ANSWERS = wire.ToolAnnotations(title="Answer an approval", read_only_hint=False, destructive_hint=True)


class RoundState(BaseModel):
    """2026-07-28: what one `invoke_agent` round hands the next (sealed on the wire by the SDK)."""

    session_id: str
    asked: list[str] = Field(default_factory=list)
    step: int = 0


class Gateway:
    """The host as MCP clients see it; one per process, shared by every connection."""

    def __init__(
        self, services: AppServices, *, caller: CallerOf = local_caller, expose_tools: bool = False
    ) -> None:
        self.services = services
        self.caller = caller
        self.exposed = ExposedTools(services.direct_tools) if expose_tools else None
        self.closing = False
        """Set when the server shuts down: cancelled calls then leave their sessions running,
        to be recovered, instead of stopping them as a client cancellation does."""


class GatewayServer(MCPServer):
    """An MCPServer whose tool list also carries the exposed pool tools, found at call time."""

    def __init__(self, gateway: Gateway, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gateway = gateway
        self.offers_tasks = False
        """Whether `invoke_agent` may run as a task (`tasks.py`): listed so, once wired."""

    async def list_tools(self) -> list[wire.Tool]:
        own = await super().list_tools()
        if self.offers_tasks:
            optional = wire.ToolExecution(task_support="optional")
            own = [t.model_copy(update={"execution": optional}) if t.name == TASK_TOOL else t for t in own]
        if self.gateway.exposed is None:
            return own
        return own + await self.gateway.exposed.listing()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> wire.CallToolResult | wire.InputRequiredResult:
        exposed = self.gateway.exposed
        if exposed is None or context is None or not await exposed.knows(name):
            return await self._call_own_tool(name, arguments, context)
        principal = require(self.gateway.caller, context, "approver")
        params = context.session.client_params
        client = params.client_info.name if params is not None else "an MCP client"

        progress = RequestProgress.of(context)

        async def report(value: float, message: str, total: float | None = None) -> None:
            await progress.report(value, total, message)

        return await exposed.call(name, arguments, caller=principal, client=client, report=report)

    def tool_arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One of our tools' arguments, checked as a call of it checks them (ValidationError)."""
        tool = self._tool_manager.get_tool(name)
        assert tool is not None, name
        model = tool.fn_metadata.arg_model
        checked = model.model_validate(tool.fn_metadata.pre_parse_json(arguments))
        return {field: getattr(checked, field) for field in model.model_fields}

    async def _call_own_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None
    ) -> wire.CallToolResult | wire.InputRequiredResult:
        """One of our tools; a domain error it raises is a refusal the caller reads, not a crash.

        The SDK hides the text of anything but a ToolError; this is the one place the gateway
        turns a `DomainError` (no such session, already answered, an unknown mode, ...) into one.
        """
        if self._tool_manager.get_tool(name) is None:
            raise unknown("tool", name)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            if isinstance(exc.__cause__, DomainError):
                raise ToolError(f"Error executing tool {name}: {exc.__cause__}") from exc.__cause__
            raise


    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> wire.GetPromptResult | wire.InputRequiredResult:
        """A prompt; one we do not have is the caller's mistake, not an internal error."""
        if self._prompt_manager.get_prompt(name) is None:
            raise unknown("prompt", name)
        return await super().get_prompt(name, arguments, context)


def unknown(kind: Literal["tool", "prompt"], name: str) -> MCPError:
    """The spec's answer to a name the server does not have: invalid params (-32602), no traceback.

    The SDK answers an unknown prompt with an internal error (-32603) logged at ERROR with its
    traceback, and an unknown tool with an error result, as if the tool had run and failed.
    """
    return MCPError(code=wire.INVALID_PARAMS, message=f"Unknown {kind}: {name}", data={"name": name})


def build_server(gateway: Gateway) -> GatewayServer:
    """The MCP server over `gateway`, with its tools registered."""
    services = gateway.services
    extension = TasksExtension() if services.gateway_tasks is not None else None
    server = GatewayServer(
        gateway,
        name="overseer",
        title="Overseer",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        extensions=[extension] if extension is not None else None,
    )
    if extension is not None and services.gateway_tasks is not None:
        methods = TaskMethods(
            GatewayTasks(services, services.gateway_tasks),
            caller=gateway.caller,
            context_of=lambda ctx: Context(request_context=ctx, mcp_server=server),
            arguments_of=lambda arguments: server.tool_arguments(TASK_TOOL, arguments),
        )
        extension.bind(methods)
        server.middleware.append(methods.middleware)
        server.offers_tasks = True

    @server.tool(name="invoke_agent", annotations=RUNS_AN_AGENT)
    async def invoke_agent(
        prompt: Annotated[str, Field(min_length=1, description="the whole task, self-contained")],
        ctx: Context,
        mode: Annotated[
            str | None, Field(description="the agent's mode: agent, ask, plan, research, review, ...")
        ] = None,
        session_id: Annotated[
            str | None, Field(description="continue this finished session instead of starting a new one")
        ] = None,
        engine: Annotated[
            EngineName | None, Field(description="which engine runs a new session's agent")
        ] = None,
        agent: Annotated[
            str | None, Field(description="the named agent a new session belongs to (default: routed, else main)")
        ] = None,
    ) -> wire.CallToolResult | wire.InputRequiredResult:
        """Run an Overseer agent on a task to its end and return its final answer.

        Its tool calls pass Overseer's approval policy; approvals are asked here when this
        client supports elicitation (else answer them with answer_approval or on the
        dashboard). Structured content carries the answer, session id, status, cost and tokens.
        Cancelling this call stops the agent.
        """
        caller = require(gateway.caller, ctx, "approver")
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        state = _round_state(ctx.request_state) if modern else None
        sub = services.events.subscribe(None)  # before starting: no event of the run can be missed
        root_id: str | None = state.session_id if state else None
        try:
            if state is None:
                session = await start_invocation(
                    services,
                    prompt=prompt,
                    mode=mode,
                    session_id=session_id,
                    engine=engine,
                    agent=agent,
                    caller=caller,
                )
                root_id = session.id
                asked: set[str] = set()
            else:
                try:
                    await services.sessions.get(state.session_id)
                except NotFound:
                    raise ToolError(f"session {state.session_id} is gone; call invoke_agent again") from None
                asked = set(state.asked)
                for key, response in (ctx.input_responses or {}).items():
                    if key not in asked:
                        continue
                    try:
                        kind = (await services.approvals.get(key)).kind
                    except ApprovalNotFound:
                        continue
                    decision = decision_from_response(response, kind=kind)
                    if decision is not None:
                        await answer_first(services.approvals, key, decision, caller)

            progress = RequestProgress.of(ctx)

            async def report(step: float, message: str) -> None:
                await progress.report(step, None, message)

            watch = Watch(
                services, root_id, report=report, step=state.step if state else 0, heard=progress.wanted
            )
            await watch.load_family()
            elicits = client_elicits(ctx)
            if modern:
                outcome = await watch.follow(sub, asked=asked, pause=elicits)
            else:
                push = PushAsker(ctx, services.approvals, caller) if elicits and ctx.session.can_send_request else None
                outcome = await watch.follow(sub, asked=asked, push=push)
            if outcome.ask:
                again = RoundState(session_id=root_id, asked=sorted(asked), step=watch.step)
                return wire.InputRequiredResult(
                    input_requests={a.id: input_request(a) for a in outcome.ask},
                    request_state=again.model_dump_json(),
                )
            assert outcome.session is not None
            return await final_result(services, outcome.session)
        except anyio.get_cancelled_exc_class():
            if root_id is not None and not gateway.closing and not services.lifecycle.closing:
                # The client cancelled: nobody waits for this run any more.
                with anyio.CancelScope(shield=True):
                    await services.sessions.stop(root_id, timeout=STOP_TIMEOUT)
            raise
        finally:
            services.events.unsubscribe(sub)

    @server.tool(name="list_sessions", annotations=READ_ONLY)
    async def list_sessions(
        ctx: Context,
        status: Annotated[SessionStatus | None, Field(description="only sessions with this status")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="at most this many, newest first")] = 50,
    ) -> SessionList:
        """List Overseer sessions, newest first."""
        require(gateway.caller, ctx, "viewer")
        found = await services.sessions.find(statuses=[status] if status else None, limit=limit)
        return SessionList(sessions=[SessionView.of(s) for s in found])

    @server.tool(name="get_session", annotations=READ_ONLY)
    async def get_session(
        id: Annotated[str, Field(description="the session id")],
        ctx: Context,
        last_n: Annotated[
            int, Field(ge=1, le=200, description="how many of the last messages to include")
        ] = 20,
    ) -> SessionDetail:
        """One session: its status and usage, its last messages and its pending approvals."""
        require(gateway.caller, ctx, "viewer")
        try:
            session = await services.sessions.get(id)
        except NotFound:
            raise ToolError(f"no session {id!r}") from None
        messages = await services.sessions.messages(id)
        return SessionDetail(
            session=SessionView.of(session),
            messages=[MessageView.of(m) for m in messages[-last_n:]],
            pending_approvals=[ApprovalView.of(a) for a in await services.approvals.pending(session_id=id)],
        )

    @server.tool(name="list_pending_approvals", annotations=READ_ONLY)
    async def list_pending_approvals(ctx: Context) -> ApprovalList:
        """Approvals waiting for an answer, in every session, oldest first."""
        require(gateway.caller, ctx, "viewer")
        return ApprovalList(approvals=[ApprovalView.of(a) for a in await services.approvals.pending()])

    @server.tool(name="answer_approval", annotations=ANSWERS)
    async def answer_approval(
        id: Annotated[str, Field(description="the approval id")],
        decision: Annotated[
            Literal["allow_once", "allow_session", "allow_always", "deny"],
            Field(
                description="allow_always also keeps the call's narrow rule (always_rules) for its session's "
                "workspace or agent (always_scope); an admin's is kept for every session"
            ),
        ],
        ctx: Context,
        message: Annotated[
            str | None, Field(description="a note for the agent, e.g. why it is denied")
        ] = None,
        updated_arguments: Annotated[
            dict[str, Any] | None,
            Field(description="allow with these arguments instead (checked by the rules again)"),
        ] = None,
    ) -> ApprovalView:
        """Answer a pending approval. The first answer counts: the same answer sent again returns
        the approval as decided (safe to retry); any other answer to a closed approval is refused."""
        caller = require(gateway.caller, ctx, "approver")
        try:
            answer = Decision(kind=decision, message=message, updated_arguments=updated_arguments)
            closed = await services.approvals.answer(id, answer, by=caller, via="mcp")
        except ApprovalNotFound:
            raise ToolError(f"no approval {id!r}; list_pending_approvals shows the open ones") from None
        return ApprovalView.of(closed)

    return server


def _round_state(raw: str | None) -> RoundState | None:
    if not raw:
        return None
    try:
        return RoundState.model_validate(json.loads(raw))
    except (ValueError, ValidationError):
        raise ToolError(
            "invoke_agent got a request_state it did not write; call it again without one"
        ) from None
