"""SessionService: what every transport does to sessions, written once.

REST, the WebSocket, the MCP gateway, the terminal and the invoke_agent server create, message,
invoke, stop and delete sessions here, read a session's last answer here, and find a session's
sub-agents here (by a store query on `parent_id`, never by scanning every session).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from backend.domain.errors import BadRequest
from backend.domain.models import (
    ACTIVE_STATUSES,
    Decider,
    OVERSEER,
    Door,
    EngineName,
    Event,
    Message,
    Session,
    SessionOrigin,
    SessionStatus,
    StopReason,
    ToolCallRecord,
)
from backend.domain.session_options import SessionOptions
from backend.app.chat import Chat, ChatInput, ChatResult
from backend.app.retry import refused_calls, retry_step
from backend.app.session_edits import NotYourSession, may_manage
from backend.auth import Principal
from backend.engine.runner import SessionBusy, SessionRunner
from backend.modes.model import UnknownMode
from backend.approvals.broker import ApprovalBroker
from backend.store.base import Store
from backend.store.media import MediaNotFound

DELETED = "The session it was asked in was deleted."
"""What whoever waits on an approval of a deleted session is told."""


class DepthLimitExceeded(BadRequest):
    """A sub-agent would nest deeper than `max_agent_depth`."""


@dataclass(kw_only=True)
class Created:
    """A new session as stored after its first message, and what that message did (if there was one)."""

    session: Session
    first: ChatResult | None = None


@dataclass(kw_only=True)
class InvokeResult:
    """What a caller of an agent gets back."""

    session_id: str
    response: str
    status: str
    cost_usd: float
    input_tokens: int
    output_tokens: int


@dataclass(kw_only=True)
class Transcript:
    """A session as stored with everything said and done in it, and the seq of its last event."""

    session: Session
    messages: list[Message]
    tool_calls: list[ToolCallRecord]
    last_seq: int


def title_of(text: str | None) -> str | None:
    """A session's title from its first message: the first line, at most 80 characters."""
    lines = (text or "").strip().splitlines()
    return lines[0][:80] if lines else None


class SessionService:
    """Creates, messages, invokes, stops and deletes sessions; reads answers and families."""

    def __init__(
        self, *, store: Store, runner: SessionRunner, chat: Chat, broker: ApprovalBroker, max_agent_depth: int
    ) -> None:
        self.store = store
        self.runner = runner
        self.chat = chat
        self.broker = broker
        self.max_agent_depth = max_agent_depth
        self.stop_elsewhere: Callable[[list[str]], Awaitable[None]] | None = None
        """On a shared database: tells the other hosts to stop these sessions' runs (backend/app/cluster_links.py)."""

    async def create(
        self, *, options: SessionOptions | None = None, first: ChatInput | None = None
    ) -> Created:
        """Create a session made with `options`; with `first` (chat input: commands and `/skill`
        work) it starts at once. Its `created_by` (who asked, through which door) owns it. It
        belongs to its `agent` (default main), whose workspace, model and mode it takes unless
        told otherwise; one nested under a parent is made as `start` makes it.

        A refused first message (unknown skill, unreadable context path, ...) raises, and leaves
        no empty session behind.
        """
        session = await self._open(
            options or SessionOptions(), title=title_of(first.text) if first else None, origin="user"
        )
        if first is None:
            return Created(session=session)
        try:
            result = await self.chat.submit(session.id, first)
        except Exception:
            await self.store.delete_session(session.id)
            raise
        return Created(session=await self.store.get_session(session.id), first=result)

    async def submit(self, session_id: str, chat_input: ChatInput) -> ChatResult:
        """Send a message (with skills, context paths, images) or run a chat command."""
        return await self.chat.submit(session_id, chat_input)

    async def start(self, *, prompt: str, options: SessionOptions | None = None) -> Session:
        """Create a session made with `options` working on `prompt`; do not wait.

        A child of `options.parent_id` is nested under it, works in its workspace with its model
        and engine unless told otherwise, and may not nest deeper than `max_agent_depth`. Given a
        named `agent` (another than the parent's), the child works in that agent's workspace with
        its model and under its rules instead; else it belongs to its parent's agent.
        A `fork` starts from a copy of the parent's history; a fork of a claude-sdk parent also
        forks the parent's SDK session.
        """
        session = await self._open(
            options or SessionOptions(), title=title_of(prompt) or "invoke", origin="api"
        )
        # The prompt is its creator's message: auto-approve covers only turns its owner starts.
        await self.runner.send(session.id, prompt, author=options.created_by if options else None)
        return session

    async def _open(self, options: SessionOptions, *, title: str | None, origin: SessionOrigin) -> Session:
        """Make the session: a child's options derived from its parent's, a fork's history copied.

        `title` and `origin` are the defaults for options that name none (a child's origin is `agent`).
        """
        if options.fork and not options.parent_id:
            raise BadRequest("fork needs parent_session_id")
        parent = await self.store.get_session(options.parent_id) if options.parent_id else None
        if parent is not None:
            await self._check_depth(parent)
        # A child of its parent's own agent inherits its room; another agent's child gets that agent's.
        inherits = parent is not None and options.agent in (None, parent.agent_id)
        session = await self.runner.create(
            options=replace(
                options,
                title=options.title or title,
                model=options.model or (parent.model if parent and inherits else None),
                engine=options.engine or (parent.engine if parent else None),
                workspace=options.workspace or (parent.workspace if parent and inherits else None),
                agent=options.agent or (parent.agent_id if parent else None),
                origin=options.origin or ("agent" if parent else origin),
                sdk_session_id=options.sdk_session_id
                or (
                    parent.sdk_session_id
                    if options.fork and parent and (options.engine or parent.engine) == "claude-sdk"
                    else None
                ),
            )
        )
        if options.fork and parent is not None:
            # The child starts from a copy of the parent's finished turns; a half-done tool round
            # (a call without its result) would be an invalid transcript, so it is left out.
            history = await self.store.list_messages(parent.id)
            answered = {m.tool_call_id for m in history if m.role == "tool"}
            for message in history:
                if message.role == "assistant" and any(c.id not in answered for c in message.tool_calls):
                    break
                await self.store.add_message(message.model_copy(update={"session_id": session.id}))
        return session

    async def follow_up(
        self,
        session_id: str,
        prompt: str,
        *,
        mode: str | None = None,
        engine: EngineName | None = None,
        author: Decider | None = None,
    ) -> Session:
        """Send `prompt` (by `author`) to a session that has finished (in `mode`, if given); do not wait.

        Raises NotFound (no such session), SessionBusy while it still runs, BadRequest for another
        engine or an unknown mode.
        """
        session = await self.store.get_session(session_id)
        if session.status in ACTIVE_STATUSES or self.runner.is_running(session_id):
            raise SessionBusy(f"session {session_id} is still {session.status}; wait for it or stop it first")
        if engine and engine != session.engine:
            raise BadRequest(f"session {session_id} runs on {session.engine}; a session keeps its engine")
        if mode and mode != session.mode:
            try:
                await self.runner.set_mode(session_id, mode)
            except UnknownMode as exc:  # a bad request, not a missing session
                raise BadRequest(str(exc)) from exc
        await self.runner.send(session_id, prompt, author=author)
        return session

    async def invoke(
        self, *, prompt: str, options: SessionOptions | None = None, timeout: float | None = None
    ) -> InvokeResult:
        """Create a session (see `start`), run it to its end (bounded by `timeout`), return its answer."""
        session = await self.start(prompt=prompt, options=options)
        done = await self.runner.wait(session.id, timeout=timeout)
        return InvokeResult(
            session_id=done.id,
            response=(
                await self.last_answer(done.id)
                if done.status == "completed"
                else (done.error or f"the session ended {done.status}")
            ),
            status=done.status,
            cost_usd=done.usage.cost_usd,
            input_tokens=done.usage.input_tokens,
            output_tokens=done.usage.output_tokens,
        )

    async def stop(self, session_id: str, *, timeout: float = 10, by: Decider | None = None) -> Session:
        """Stop a session's run and its sub-agents' runs (NotFound for no such session); the calls
        it cuts short are recorded as stopped by `by` (Overseer itself when None)."""
        await self.store.get_session(session_id)
        if self.stop_elsewhere is not None:  # its run, or a sub-agent's, may execute on another host
            await self.stop_elsewhere(sorted(await self.family(session_id)))
        return await self.runner.stop(session_id, timeout=timeout, by=by)

    async def delete(self, session_id: str, *, by: Principal | None = None, via: Door = "core") -> None:
        """Withdraw what is asked in the session, stop it, and delete it with its transcript.

        `by` deletes it as they rename or archive it: its owner or an admin (NotYourSession
        else); the withdrawn approvals and their audit rows name them. None: Overseer itself
        (a refused first message's empty session).
        """
        session = await self.store.get_session(session_id)
        if by is not None and not may_manage(by, session):
            owner = "its owner" if session.created_by is None else f"its owner ({session.created_by.name})"
            raise NotYourSession(f"only {owner} or an admin may delete session {session_id}; you are {by.name} ({by.role})")
        decider = by.decider(via) if by is not None else OVERSEER
        # Gates on the session (a workflow's next step) are withdrawn, so whoever waits on them learns why.
        for approval in await self.broker.pending(session_id=session_id):
            await self.broker.cancel(approval.id, DELETED, decider=decider)
        await self.runner.stop(session_id)
        await self.store.delete_session(session_id)
        if self.runner.gate.media is not None:  # its tool results' images and audio go too
            await asyncio.to_thread(self.runner.gate.media.remove_session, session_id)

    async def find(
        self,
        *,
        statuses: list[SessionStatus] | None = None,
        limit: int = 200,
        archived: bool | None = None,
        text: str | None = None,
    ) -> list[Session]:
        """Sessions, newest first; `text` is searched in titles and messages (case-insensitive, literally)."""
        return await self.store.list_sessions(statuses=statuses, limit=limit, archived=archived, text=text)

    def workspaces(self) -> list[Path]:
        """The workspaces a person may choose for a new session: the default one, the agents',
        and the configured `workspace_roots`, each usable (backend/engine/workspaces.py)."""
        if self.runner.workspaces is None:
            return [self.runner.default_workspace]
        return self.runner.workspaces.choices()

    def allowed_workspace(self, folder: Path, *, by: Principal) -> Path:
        """`folder` resolved, if a session of `by`'s could work there (WorkspaceRefused, saying why, else):
        what a person may look into (its skills) is what they could start a session in."""
        return self.runner.allowed_workspace(folder, chooser=not by.can("admin"))

    async def get(self, session_id: str) -> Session:
        """The session as stored (NotFound for no such session)."""
        return await self.store.get_session(session_id)

    async def transcript(self, session_id: str) -> Transcript:
        return Transcript(
            session=await self.store.get_session(session_id),
            messages=await self.store.list_messages(session_id),
            tool_calls=await self.store.list_tool_calls(session_id),
            last_seq=await self.store.last_seq(session_id),
        )

    async def messages(self, session_id: str) -> list[Message]:
        return await self.store.list_messages(session_id)

    async def events(self, session_id: str, since: int = 0) -> list[Event]:
        """The session's events after seq `since`, as stored (NotFound for no such session)."""
        await self.store.get_session(session_id)
        return await self.runner.bus.replay(session_id, since)

    async def media_path(self, session_id: str, name: str) -> Path:
        """The file of an image or audio clip of one of the session's tool results (NotFound else)."""
        await self.store.get_session(session_id)
        media = self.runner.gate.media
        if media is None:
            raise MediaNotFound(f"no media {name!r} in session {session_id!r}")
        return await asyncio.to_thread(media.path, session_id, name)

    async def wait(self, session_id: str, *, timeout: float | None = None) -> Session:
        """Wait (bounded) for the session's current run to end; the session as stored then."""
        return await self.runner.wait(session_id, timeout=timeout)

    async def refused_calls(self, session_id: str) -> dict[str, StopReason]:
        """The session's tool calls a person denied or let time out: the ones a retry may ask again."""
        return await refused_calls(self.store, session_id)

    async def retry_call(self, session_id: str, call_id: str) -> Session:
        """Propose a refused call again: it asks again (Conflict while the session runs)."""
        return await retry_step(store=self.store, runner=self.runner, session_id=session_id, call_id=call_id)

    async def last_answer(self, session_id: str) -> str:
        """The session's last assistant text ("" when the agent has not answered in words)."""
        for message in reversed(await self.store.list_messages(session_id)):
            if message.role == "assistant" and message.content:
                return message.content
        return ""

    async def children(self, session_id: str) -> list[Session]:
        """The sessions nested directly under `session_id`, oldest first."""
        return await self.store.list_children(session_id)

    async def family(self, root_id: str) -> set[str]:
        """The ids of `root_id` and every session nested under it, however deep."""
        family = {root_id}
        todo = [root_id]
        while todo:
            for child in await self.store.list_children(todo.pop()):
                if child.id not in family:
                    family.add(child.id)
                    todo.append(child.id)
        return family

    async def _check_depth(self, parent: Session) -> None:
        depth = 0
        current: Session | None = parent
        seen: set[str] = set()
        while current is not None and current.parent_id and current.id not in seen:
            seen.add(current.id)
            depth += 1
            current = await self.store.get_session(current.parent_id)
        limit = self.max_agent_depth
        if depth + 1 > limit:
            raise DepthLimitExceeded(
                f"sub-agent depth limit reached: session {parent.id} is already {depth} level(s) deep and "
                f"max_agent_depth is {limit}; do this work in the current session instead of invoking "
                "another agent"
            )
