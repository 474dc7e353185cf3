"""One `invoke_agent` call: start (or continue) a session, then follow it and its sub-agents.

Following means: progress for what happens in the session family (the session and every
session nested under it), approvals of that family put to the client, and the end of the run.
The run is the runner's, not ours: it goes on in the host whatever happens to the MCP request,
unless the client cancels, which stops it (see `server.py`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import mcp_types as wire
from mcp.server.mcpserver.exceptions import ToolError

from backend.app.services import AppServices
from backend.auth import Principal
from backend.domain.errors import NotFound
from backend.domain.models import Approval, EngineName, Event, Session
from backend.domain.session_options import SessionOptions
from backend.gateway.elicitation import ASKED_KINDS, Asker

log = logging.getLogger(__name__)

RUN_TIMEOUT = 24 * 3600.0
"""A run is bounded by its own limits (iterations, approval timeouts); this only caps the wait."""
HEARTBEAT_SECONDS = float(os.environ.get("OVERSEER_MCP_HEARTBEAT_SECONDS") or 30.0)
"""With nothing happening, a progress note this often (to a client that gave a progress token):
the client sees the call is alive and what it waits for, and a client whose request timeout is
reset by progress (Claude Code, the TypeScript SDK's `resetTimeoutOnProgress`) keeps waiting for
as long as a person takes. The variable exists for tests, which cannot wait 30 s per beat."""

Reporter = Callable[[float, str], Awaitable[None]]


class EventFeed(Protocol):
    """The events a call follows (a subscription to the app's event bus)."""

    async def get(self, timeout: float | None = None) -> Event:
        """The next event, waiting at most `timeout` seconds (TimeoutError); EOFError once cut off."""
        ...


@dataclass(kw_only=True)
class Outcome:
    """How following ended: the run's end (`session`), or approvals the client must be asked about."""

    session: Session | None = None
    ask: list[Approval] = field(default_factory=list)


async def start_invocation(
    services: AppServices,
    *,
    prompt: str,
    mode: str | None,
    session_id: str | None,
    engine: EngineName | None,
    agent: str | None = None,
    caller: Principal | None = None,
) -> Session:
    """A new session of origin "mcp" working on `prompt`, or `prompt` sent to an idle session.

    A new session belongs to `agent`, else to the `gateway` route matching `caller`, else to main
    (UnknownAgent for an agent that is not configured). `caller` owns a new session and is the
    prompt's author either way (auto-approve covers only its owner's turns).

    A refusal (still running, another engine, an unknown mode) is a DomainError, which the
    server turns into the tool's error result.
    """
    if agent and session_id:
        raise ToolError("a continued session keeps its agent: give session_id or agent, not both")
    author = caller.decider("mcp") if caller is not None else None
    if session_id:
        try:
            return await services.sessions.follow_up(session_id, prompt, mode=mode, engine=engine, author=author)
        except NotFound:
            raise ToolError(f"no session {session_id!r}; list_sessions shows the ones there are") from None
    return await services.sessions.start(
        prompt=prompt,
        options=SessionOptions(
            mode=mode,
            engine=engine,
            origin="mcp",
            agent=services.agent_routes.agent_for("gateway", user=caller.name if caller else None, named=agent),
            created_by=author,
        ),
    )


async def final_result(services: AppServices, session: Session) -> wire.CallToolResult:
    """The run's end for the client: the final answer (or why it ended) and the session's numbers."""
    text = await _answer_of(services, session)
    return wire.CallToolResult(
        content=[wire.TextContent(type="text", text=text)],
        # The answer is in here too: some clients (Claude Code) show their model only this part.
        structured_content={
            "response": text,
            "session_id": session.id,
            "status": session.status,
            "cost_usd": session.usage.cost_usd,
            "tokens": {"input": session.usage.input_tokens, "output": session.usage.output_tokens},
        },
        is_error=session.status != "completed",
    )


async def _answer_of(services: AppServices, session: Session) -> str:
    if session.status != "completed":
        return session.error or f"The session ended {session.status}."
    return await services.sessions.last_answer(session.id) or "(the agent finished without a text answer)"


class Watch:
    """Follows one root session and the sessions nested under it."""

    def __init__(
        self, services: AppServices, root_id: str, *, report: Reporter, step: int = 0, heard: bool = True
    ) -> None:
        self.services = services
        self.root_id = root_id
        self.family: set[str] = {root_id}
        self.step = step
        self._report = report
        self.heard = heard
        """Whether the client asked for progress (gave a token): if not, nothing is described to it."""

    async def load_family(self) -> None:
        """Sub-agents already stored (a continued round): descendants of the root."""
        self.family |= await self.services.sessions.family(self.root_id)

    async def pending_tool_approvals(self) -> list[Approval]:
        return [
            a
            for a in await self.services.approvals.pending()
            if a.session_id in self.family and a.kind in ASKED_KINDS
        ]

    async def note(self, message: str) -> None:
        """One progress step; a client that went away is not our failure."""
        if not self.heard:
            return
        self.step += 1
        try:
            await self._report(self.step, message)
        except Exception as exc:  # noqa: BLE001 - progress is best effort
            log.debug("progress not delivered: %s", exc)

    async def follow(
        self, sub: EventFeed, *, asked: set[str], push: Asker | None = None, pause: bool = False
    ) -> Outcome:
        """Follow until the run ends, asking the client about each new tool approval.

        `push`: ask while following (handshake era). `pause`: stop following as soon as an
        approval needs the client and return it (2026-07-28). Approvals in `asked` were put to
        the client already and are not asked again; new ones are added.
        """
        outcome = Outcome()
        asking: dict[str, anyio.CancelScope] = {}

        async with anyio.create_task_group() as tg:

            async def wait_for_end() -> None:
                outcome.session = await self.services.sessions.wait(self.root_id, timeout=RUN_TIMEOUT)
                tg.cancel_scope.cancel()

            async def ask(approval: Approval, asker: Asker) -> None:
                with anyio.CancelScope() as scope:
                    asking[approval.id] = scope
                    try:
                        await asker.ask(approval)
                    finally:
                        asking.pop(approval.id, None)

            async def needs_client(approvals: list[Approval]) -> None:
                fresh = [a for a in approvals if a.id not in asked]
                if not fresh:
                    return
                asked.update(a.id for a in fresh)
                if pause:
                    outcome.ask = fresh
                    tg.cancel_scope.cancel()
                elif push is not None:
                    for approval in fresh:
                        tg.start_soon(ask, approval, push)

            tg.start_soon(wait_for_end)
            await needs_client(await self.pending_tool_approvals())
            while True:
                try:
                    event = await sub.get(timeout=HEARTBEAT_SECONDS)
                except TimeoutError:
                    if self.heard:  # a tokenless call waits in silence: nothing it could match
                        await self.note(await self._heartbeat())
                    continue
                except EOFError:  # cut off for falling behind: the run's end still comes
                    log.warning(
                        "invoke_agent stopped following events of %s (subscriber cut off)", self.root_id
                    )
                    await anyio.sleep_forever()
                if event.ephemeral or not self._absorb(event):
                    continue
                if event.type == "approval.resolved":
                    scope = asking.get(str(event.data.get("id")))
                    if scope is not None:
                        scope.cancel()  # answered elsewhere: withdraw the client's prompt
                described = self._describe(event)
                if described:
                    await self.note(described)
                if event.type == "approval.requested" and event.data.get("kind", "tool") in ASKED_KINDS:
                    # The broker's list, not the event alone: parallel calls ask together.
                    await needs_client(await self.pending_tool_approvals())
        return outcome

    def _absorb(self, event: Event) -> bool:
        """Track sub-agents as they are created; True when the event belongs to the family."""
        if event.type == "session.created" and event.data.get("parent_id") in self.family:
            self.family.add(event.session_id)
        return event.session_id in self.family

    def _describe(self, event: Event) -> str | None:
        who = "" if event.session_id == self.root_id else f"sub-agent {event.session_id[:8]}: "
        data = event.data
        if event.type == "message" and data.get("role") == "assistant":
            calls = [str(c.get("name")) for c in data.get("tool_calls") or []]
            return f"{who}the model calls {', '.join(calls)}" if calls else f"{who}the model answered"
        if event.type == "tool.started":
            return f"{who}running {data.get('name')}"
        if event.type == "tool.result":
            return f"{who}{data.get('name')} {data.get('status')}"
        if event.type == "approval.requested":
            return (
                f"{who}waiting for approval of {data.get('tool_name')} (approval {data.get('id')}): "
                "answer it here, with answer_approval, or on the dashboard"
            )
        if event.type == "approval.resolved":
            return f"{who}approval {data.get('id')} {data.get('status')} by {data.get('decided_by')}"
        if event.type == "session.created" and who:
            return f"{who}started ({data.get('title', '')})"
        return None

    async def _heartbeat(self) -> str:
        waiting = await self.pending_tool_approvals()
        if waiting:
            return "still waiting for approval: " + ", ".join(f"{a.tool_name} ({a.id})" for a in waiting)
        return "still working"
