"""A person's edits of a session's own settings: its title, archiving it, its auto-approve switch.

Only the session's owner (who created it) and admins make them; a viewer never does. A session
Overseer started itself (cron, workflows, sub-agents) has no owner: admins only. The change is
written through the runner, as one store transaction on the row as stored (so a host running
the session elsewhere cannot write it back out), and reaches every dashboard as
`session.updated`. An active session (running or waiting for a person) cannot be archived: it
would vanish from the list while it still needs watching; stop it, or let it finish, first.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from backend.app.auto_approve import AutoApprover
from backend.auth import Principal
from backend.domain.errors import Forbidden, Invalid
from backend.domain.models import ACTIVE_STATUSES, AutoApprove, AutoApproveScope, Door, Session
from backend.engine.runner import SessionBusy, SessionRunner
from backend.store.base import Store

MAX_TITLE = 200


class NotYourSession(Forbidden):
    """The caller may not change this session: not its owner, nor an admin."""


class EditInvalid(Invalid):
    """An edit that cannot apply as sent: nothing to change, an empty title, ..."""


@dataclass(kw_only=True)
class SessionEdit:
    """What to change; None leaves a setting as it is."""

    title: str | None = None
    archived: bool | None = None
    auto_approve: bool | None = None
    approve_pending: bool = False
    """With `auto_approve=True`: also allow the approvals already waiting in the session."""
    scope: AutoApproveScope | None = None
    """With `auto_approve=True`: what it covers; None: "edits_and_commands"."""
    high_risk: bool = False
    """With `auto_approve=True`: allow High-risk calls too (otherwise they still ask)."""


def may_manage(principal: Principal, session: Session) -> bool:
    """Admins manage every session; an approver the sessions they created."""
    if principal.can("admin"):
        return True
    owner = session.created_by
    return (
        principal.can("approver")
        and owner is not None
        and (owner.name, owner.kind) == (principal.name, principal.kind)
    )


def clean_title(title: str) -> str:
    """A title as shown: whitespace (line breaks too) collapsed to single spaces, trimmed."""
    text = " ".join(title.split())
    if not text:
        raise EditInvalid("a title cannot be empty")
    if len(text) > MAX_TITLE:
        raise EditInvalid(f"a title is at most {MAX_TITLE} characters; this one has {len(text)}")
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise EditInvalid("a title cannot hold control characters")
    return text


class SessionEditor:
    """Renames, archives and switches auto-approve on sessions, for their owners and admins."""

    def __init__(self, *, store: Store, runner: SessionRunner, auto: AutoApprover) -> None:
        self._store = store
        self._runner = runner
        self._auto = auto

    async def edit(self, session_id: str, change: SessionEdit, *, by: Principal, via: Door) -> Session:
        """Apply `change` for `by`; the session as it is afterwards.

        Raises EditInvalid (nothing to change, a bad title), NotFound, NotYourSession, and
        SessionBusy for archiving an active session; when it raises, nothing has changed.
        """
        if change.approve_pending and change.auto_approve is not True:
            raise EditInvalid("approve_pending goes with auto_approve: true")
        if (change.scope is not None or change.high_risk) and change.auto_approve is not True:
            raise EditInvalid("auto_approve_scope and auto_approve_high_risk go with auto_approve: true")
        if change.title is None and change.archived is None and change.auto_approve is None:
            raise EditInvalid("nothing to change: send title, archived or auto_approve")
        if change.auto_approve is True:
            self._auto.check_allowed()  # the managed policy may turn the switch off (403)
        title = clean_title(change.title) if change.title is not None else None
        session = await self._store.get_session(session_id)
        if not may_manage(by, session):
            owner = "its owner" if session.created_by is None else f"its owner ({session.created_by.name})"
            raise NotYourSession(f"only {owner} or an admin may change session {session_id}; you are {by.name} ({by.role})")

        def decide(current: Session) -> dict[str, object] | None:
            changes: dict[str, object] = {}
            if title is not None and title != current.title:
                changes["title"] = title
            if change.archived is not None and change.archived != current.archived:
                if change.archived and current.status in ACTIVE_STATUSES:
                    raise SessionBusy(
                        f"session {session_id} is {current.status.replace('_', ' ')}; stop it or let it finish "
                        "before archiving it"
                    )
                changes["archived"] = change.archived
            wanted = (change.scope or "edits_and_commands", change.high_risk)
            if change.auto_approve is True and (
                current.auto_approve is None or (current.auto_approve.scope, current.auto_approve.high_risk) != wanted
            ):  # turned on, or its scope changed: in the name of who said so
                changes["auto_approve"] = AutoApprove(by=by.decider(via), scope=wanted[0], high_risk=wanted[1])
            elif change.auto_approve is False and current.auto_approve is not None:
                changes["auto_approve"] = None
            return changes or None

        session = await self._runner.edit(session_id, decide)
        if change.approve_pending:
            await self._auto.approve_pending(session_id)
        return session
