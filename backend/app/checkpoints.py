"""CheckpointService (issue 32): what each step of a session changed, and rewinding it.

Every step that may change the workspace has a checkpoint taken before it (backend/checkpoints/).
A step's changes are its checkpoint against the next checkpoint of the same workspace, or against
the workspace as it is now for the last one. A rewind restores the workspace (or chosen files) to
before a step; the REST API, `overseer rewind` and Telegram's `/undo` all come here.

A rewind is a person's action, like an answer: it needs the approver role and follows session
ownership as a rename or a delete does (its owner or an admin), it is refused while the session
runs, and it is written to the audit log naming who asked. It first takes a checkpoint of the
workspace as it is (kind "rewind"), so the rewind itself is the session's newest step and can be
undone the same way. With `fork`, a new session starts from the transcript before that step.
"""

from __future__ import annotations

import asyncio
import builtins
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field

from backend.app.session_edits import NotYourSession, may_manage
from backend.app.sessions import SessionService
from backend.auth import Principal
from backend.checkpoints.shadow import FileChange, ShadowRepo
from backend.checkpoints.steps import Checkpointer, real_workspace
from backend.domain.checkpoints import Checkpoint
from backend.domain.errors import BadRequest, Conflict, Invalid, NotFound
from backend.domain.models import ACTIVE_STATUSES, AuditEntry, Door, Event, Message, Session
from backend.domain.session_options import SessionOptions
from backend.engine.events import EventBus
from backend.engine.runner import SessionBusy, SessionRunner
from backend.store.base import Store, Written
from backend.store.ready import then

REWIND_TOOL = "rewind"
"""The audit row's tool name for a rewind (the audit log lists tool decisions and rewinds alike)."""


class CheckpointFile(BaseModel):
    """One file a step changed (or a rewind would change), read from the shadow repository."""

    path: str
    """Workspace-relative, with forward slashes; a renamed file's new path, a deleted file's old one."""
    status: Literal["added", "modified", "deleted", "mode", "renamed"]
    diff: str
    """A unified diff ("" when binary)."""
    binary: bool
    added: int = 0
    """Lines added (0 when binary), counted in the diff: an overwrite's every new line."""
    removed: int = 0
    """Lines removed (0 when binary): an overwrite's every old line it did not keep."""
    old_path: str | None = None
    """A renamed (moved) file: where it was. git's rename detection pairs a removed file with an
    added one at least half alike, so `mv a b` is one change "a → b", not a deletion and a file."""
    similarity: int | None = None
    """A renamed file: how alike its old and new content are, in percent (100: moved unchanged)."""


class StepChanges(Checkpoint):
    """A step that changed (or may have changed) the workspace, with the files it changed."""

    files: list[CheckpointFile] = Field(default_factory=list)


class CheckpointStatus(BaseModel):
    """Whether the steps of a session get checkpoints, so a step without one can say why."""

    enabled: bool
    """False: this host keeps no checkpoints (`checkpoints.enabled` is off), so what a step
    changed is not recorded, and the dashboard says so instead of guessing it from the arguments."""


class RewindResult(BaseModel):
    """What a rewind did."""

    step: int
    """The workspace (or the chosen files) is as it was before this step."""
    tool_name: str | None
    """The step's tool (None: the step was itself a rewind)."""
    workspace: str
    restored: list[str]
    """The workspace-relative paths written or removed."""
    checkpoint_step: int
    """The rewind's own checkpoint (the workspace just before it): rewinding to before it undoes
    this rewind."""
    forked_session_id: str | None = None
    """With fork: the new session, whose transcript ends before `step`."""


class WorkspaceGone(Conflict):
    """The step's workspace folder no longer exists."""


class NothingToRewind(NotFound):
    """The session has no checkpoints: nothing it did changed (or could change) the workspace."""


@dataclass(kw_only=True)
class _Restored:
    checkpoint: Checkpoint
    mark: Checkpoint
    restored: list[str]


def file_of(change: FileChange) -> CheckpointFile:
    """The wire shape of a shadow repository's file change."""
    return CheckpointFile(
        path=change.path,
        status=change.status,
        diff=change.diff,
        binary=change.binary,
        added=change.added,
        removed=change.removed,
        old_path=change.old_path,
        similarity=change.similarity,
    )


def touched_paths(changes: builtins.list[FileChange]) -> builtins.set[str]:
    """Every path the changes touch: a renamed file's old path as well as its new one."""
    return {c.path for c in changes} | {c.old_path for c in changes if c.old_path is not None}


def with_moves(chosen: builtins.list[str], changes: builtins.list[FileChange]) -> builtins.list[str]:
    """The chosen paths, and for a chosen renamed file (by either of its paths) the other one too:
    restoring a move takes the file back to where it was, not just away from where it went."""
    out = list(chosen)
    for change in changes:
        if change.old_path is None:
            continue
        pair = (change.old_path, change.path)
        if any(_under(path, spec) for path in pair for spec in chosen):
            out += [path for path in pair if path not in out]
    return out


def _under(path: str, spec: str) -> bool:
    return path == spec or path.startswith(spec + "/")


def clean_paths(files: builtins.list[str]) -> builtins.list[str]:
    """Chosen files as workspace-relative POSIX paths; Invalid for an empty, absolute or escaping one."""
    cleaned: list[str] = []
    for raw in files:
        path = PurePosixPath(raw.replace("\\", "/"))
        if not raw.strip() or path.is_absolute() or ".." in path.parts or str(path) in ("", "."):
            raise Invalid(f"files are paths inside the workspace, relative to it; {raw!r} is not")
        if str(path) not in cleaned:
            cleaned.append(str(path))
    if not cleaned:
        raise Invalid("files is empty: name at least one file, or leave it out to restore them all")
    return cleaned


class CheckpointService:
    """Lists a session's steps with what they changed, diffs them, and rewinds the workspace."""

    def __init__(
        self,
        *,
        store: Store,
        checkpointer: Checkpointer,
        runner: SessionRunner,
        bus: EventBus,
        sessions: SessionService,
    ) -> None:
        self._store = store
        self._checkpointer = checkpointer
        self._runner = runner
        self._bus = bus
        self._sessions = sessions

    async def list(self, session_id: str) -> builtins.list[StepChanges]:
        """The session's steps, oldest first, each with the files it changed (NotFound for no such session).

        A step's changes are its checkpoint against the next checkpoint of the same workspace (of
        any session working there), or against the workspace as it is now for the last one.
        """
        await self._store.get_session(session_id)
        steps: list[StepChanges] = []
        others: dict[str, builtins.list[Checkpoint]] = {}
        for checkpoint in await self._store.list_checkpoints(session_id):
            if checkpoint.workspace not in others:  # every session's, in the order they were taken
                others[checkpoint.workspace] = await self._store.workspace_checkpoints(checkpoint.workspace)
            try:
                after = _next_commit(others[checkpoint.workspace], checkpoint)
                changes = await self._changes(checkpoint, after)
            except WorkspaceGone:  # the step is listed; what it changed went with its folder
                changes = []
            steps.append(StepChanges(**checkpoint.model_dump(), files=[file_of(c) for c in changes]))
        return steps

    async def status(self, session_id: str) -> CheckpointStatus:
        """Whether this session's steps get checkpoints (NotFound for no such session)."""
        await self._store.get_session(session_id)
        return CheckpointStatus(enabled=self._checkpointer.enabled)

    async def diff(self, session_id: str, step: int) -> builtins.list[CheckpointFile]:
        """What differs between the workspace before `step` and the workspace now: what a rewind to
        before it would change (NotFound for no such session or step)."""
        checkpoint = await self._checkpoint(session_id, step)
        return [file_of(c) for c in await self._changes(checkpoint, None)]

    async def preview(self, session_id: str, step: int | None = None) -> StepChanges:
        """The step a rewind would go back to before (default: the last), with the files that
        differ from the workspace now: what the rewind would change. NotFound for no such step."""
        target = await self._target(session_id, step)
        files = [file_of(c) for c in await self._changes(target, None)]
        return StepChanges(**target.model_dump(), files=files)

    async def rewind(
        self,
        session_id: str,
        *,
        step: int | None = None,
        files: builtins.list[str] | None = None,
        fork: bool = False,
        by: Principal,
        via: Door,
    ) -> RewindResult:
        """Restore the workspace (or `files` of it: files or folders) to before `step` (default:
        before the last step).

        Refused (nothing changed): NotYourSession for someone not its owner nor an admin,
        SessionBusy (409) while the session runs, NotFound for no such step, Invalid for a file
        that is not a workspace path or did not change since before the step.
        """
        session = await self._store.get_session(session_id)
        if not may_manage(by, session):
            owner = "its owner" if session.created_by is None else f"its owner ({session.created_by.name})"
            raise NotYourSession(
                f"only {owner} or an admin may rewind session {session_id}; you are {by.name} ({by.role})"
            )
        chosen = clean_paths(files) if files is not None else None
        if fork and session.engine == "claude-sdk":
            # The SDK keeps its own transcript, which cannot be cut before a step.
            raise BadRequest(
                f"session {session_id} runs on claude-sdk, whose conversation cannot be forked from a step"
            )
        self._refuse_if_running(session)
        target = await self._target(session_id, step)
        await self._refuse_if_others_run(session, target.workspace)
        done = await self._restore(session, target, chosen, by=by, via=via)
        forked = await self._fork(session, target, by=by, via=via) if fork else None
        await self._record(session, done, chosen, forked=forked, by=by, via=via)
        return RewindResult(
            step=target.step,
            tool_name=target.tool_name,
            workspace=target.workspace,
            restored=done.restored,
            checkpoint_step=done.mark.step,
            forked_session_id=forked,
        )

    def _refuse_if_running(self, session: Session) -> None:
        if session.status in ACTIVE_STATUSES or self._runner.is_running(session.id):
            doing = "waiting for an approval" if session.status == "waiting_approval" else "running a step"
            raise SessionBusy(
                f"session {session.id} is {doing}; stop it or let it finish before rewinding its workspace"
            )

    async def _refuse_if_others_run(self, session: Session, workspace: str) -> None:
        """Another session working in the same folder would have files change under its feet
        (and its next checkpoint would take the rewind for its own step's doing)."""
        real = real_workspace(workspace)
        for other in await self._store.list_sessions(statuses=ACTIVE_STATUSES, limit=100_000):
            if other.id == session.id:
                continue
            if other.status == "running" and real_workspace(other.workspace) == real:
                raise SessionBusy(
                    f"session {other.id} is running a step in the same workspace ({real}); "
                    "stop it or let it finish before rewinding the workspace"
                )

    async def _target(self, session_id: str, step: int | None) -> Checkpoint:
        if step is not None:
            return await self._checkpoint(session_id, step)
        checkpoints = await self._store.list_checkpoints(session_id)
        if not checkpoints:
            raise NothingToRewind(
                f"session {session_id} has no steps that changed the workspace; nothing to rewind"
            )
        return checkpoints[-1]

    async def _checkpoint(self, session_id: str, step: int) -> Checkpoint:
        await self._store.get_session(session_id)
        try:
            return await self._store.get_checkpoint(session_id, step)
        except NotFound:
            checkpoints = await self._store.list_checkpoints(session_id)
            there = (
                f"its steps are 1 to {checkpoints[-1].step}"
                if checkpoints
                else "it has no steps that changed the workspace"
            )
            raise NotFound(f"session {session_id} has no step {step}; {there}") from None

    async def _shadow(self, workspace: str) -> ShadowRepo:
        if not await asyncio.to_thread(Path(workspace).is_dir):
            raise WorkspaceGone(
                f"the workspace {workspace} no longer exists; its checkpoints cannot be shown or restored"
            )
        return await self._checkpointer.shadow_for(Path(workspace))

    async def _changes(self, checkpoint: Checkpoint, after: str | None) -> builtins.list[FileChange]:
        shadow = await self._shadow(checkpoint.workspace)
        return await asyncio.to_thread(shadow.changes, checkpoint.commit, after)

    async def _restore(
        self,
        session: Session,
        target: Checkpoint,
        chosen: builtins.list[str] | None,
        *,
        by: Principal,
        via: Door,
    ) -> _Restored:
        workspace = Path(target.workspace)
        shadow = await self._shadow(target.workspace)
        async with self._checkpointer.locked(workspace):
            # Checked again under the lock: a step that began meanwhile took its checkpoint first.
            self._refuse_if_running(await self._store.get_session(session.id))
            await self._refuse_if_others_run(session, target.workspace)
            if chosen is not None:
                since = await asyncio.to_thread(shadow.changes, target.commit, None)
                changed = touched_paths(since)
                unchanged = [p for p in chosen if not any(_under(c, p) for c in changed)]
                if unchanged:
                    listed = ", ".join(sorted(changed)) or "none"
                    raise Invalid(
                        f"{', '.join(unchanged)} did not change since before step {target.step}; "
                        f"the files that did: {listed}"
                    )
                chosen = with_moves(chosen, since)
            snapshot = await asyncio.to_thread(shadow.snapshot)
            self._checkpointer.forget_steps(session.id)  # it numbers this one itself
            mark = Checkpoint(
                session_id=session.id,
                step=await self._store.next_checkpoint_step(session.id),
                tool_call_id=None,
                tool_name=None,
                kind="rewind",
                workspace=target.workspace,
                commit=snapshot.commit,
                skipped=[f"{s.path}: {s.reason}" for s in snapshot.skipped],
                by=by.decider(via),
            )
            await self._bus.publish(
                session.id,
                "checkpoint.created",
                {
                    "step": mark.step,
                    "id": None,
                    "name": None,
                    "kind": "rewind",
                    "commit": mark.commit,
                    "skipped": mark.skipped,
                },
                persist=lambda event: then(self._store.add_checkpoint(mark, event=event), _event_of),
            )
            restored = await asyncio.to_thread(shadow.restore, target.commit, chosen)
        return _Restored(checkpoint=target, mark=mark, restored=sorted(restored))

    async def _fork(self, session: Session, target: Checkpoint, *, by: Principal, via: Door) -> str:
        """A new session in the same workspace whose transcript is the original's before `target`."""
        history = await self._store.list_messages(session.id)
        kept = _before(history, target)
        created = await self._sessions.create(
            options=SessionOptions(
                title=f"{session.title or session.id} (from before step {target.step})"[:200],
                mode=session.mode,
                model=session.model or None,
                engine=session.engine,
                workspace=session.workspace,
                agent=session.agent_id,
                instructions=session.instructions,
                origin=session.origin,
                created_by=by.decider(via),
            )
        )
        for message in kept:
            await self._store.add_message(message.model_copy(update={"session_id": created.session.id}))
        return created.session.id

    async def _record(
        self,
        session: Session,
        done: _Restored,
        chosen: builtins.list[str] | None,
        *,
        forked: str | None,
        by: Principal,
        via: Door,
    ) -> None:
        """One transaction: the audit row naming who rewound, and the session's `checkpoint.rewound` event."""
        target = done.checkpoint
        what = f"{len(done.restored)} file(s)" if done.restored else "nothing (no file differed)"
        detail = f"restored {what} to before step {target.step}" + (
            f" ({target.tool_name})" if target.tool_name else ""
        )
        entry = AuditEntry(
            session_id=session.id,
            tool_call_id=target.tool_call_id or "",
            tool_name=REWIND_TOOL,
            arguments={
                "step": target.step,
                "files": chosen,
                "fork": forked is not None,
                "restored": done.restored,
            },
            decision="allow",
            decided_by="user",
            decider=by.decider(via),
            detail=detail + (f"; forked as session {forked}" if forked else ""),
        )
        data = {
            "step": target.step,
            "restored": done.restored,
            "checkpoint_step": done.mark.step,
            "forked_session_id": forked,
            "by": by.decider(via).model_dump(),
        }
        await self._bus.publish(
            session.id,
            "checkpoint.rewound",
            data,
            persist=lambda event: then(self._store.record_decision(entry, event=event), _event_of),
        )


def _before(history: builtins.list[Message], target: Checkpoint) -> builtins.list[Message]:
    """The messages before the step: up to the assistant message that asked for its call (for a
    rewind's own checkpoint, up to its time), without a half-done tool round at the end."""
    cut = next(
        (
            i
            for i, m in enumerate(history)
            if (target.tool_call_id and any(c.id == target.tool_call_id for c in m.tool_calls))
            or (target.tool_call_id is None and m.created_at > target.created_at)
        ),
        len(history),
    )
    kept = history[:cut]
    answered = {m.tool_call_id for m in kept if m.role == "tool"}
    for i, message in enumerate(kept):
        if message.role == "assistant" and any(c.id not in answered for c in message.tool_calls):
            return kept[:i]
    return kept


def _next_commit(checkpoints: builtins.list[Checkpoint], checkpoint: Checkpoint) -> str | None:
    """The commit of the workspace's checkpoint after `checkpoint` (None: it is the last)."""
    keys = [(c.session_id, c.step) for c in checkpoints]
    try:
        at = keys.index((checkpoint.session_id, checkpoint.step))
    except ValueError:  # not among the workspace's (pruned meanwhile): the workspace now
        return None
    return checkpoints[at + 1].commit if at + 1 < len(checkpoints) else None


def _event_of(written: Written) -> Event:
    assert written.event is not None
    return written.event
