"""Domain errors: one base class, a few kinds. The API maps each kind to one HTTP status.

Raise a kind (or a subclass of one) to refuse a request; its message is shown to whoever asked,
so it names the fault. Anything else that escapes a request is a bug (a 500), including a bare
`ValueError`: the table in `backend/api/app.py` has no entry for it on purpose.

    NotFound    404  no such session, approval, schedule, mode, skill, workflow
    Conflict    409  it exists, but its state does not allow this now
    Forbidden   403  the caller's role does not allow this
    BadRequest  400  the request cannot be carried out as asked
    Invalid     422  what was sent does not validate (a BadRequest)
    StorageUnavailable  503  nothing can be saved now: the disk is full, the database read-only
"""

from __future__ import annotations


class DomainError(Exception):
    """A request the domain refuses; the message is safe to show to whoever asked."""


class NotFound(DomainError, KeyError):
    """No such thing (session, approval, schedule, ...)."""

    def __str__(self) -> str:  # KeyError's str() would be the repr of its argument
        return str(self.args[0]) if self.args else ""


class Conflict(DomainError):
    """The thing exists but its state does not allow this now (answered, running, finished, ...)."""


class Forbidden(DomainError):
    """The caller's role does not allow this."""


class BadRequest(DomainError, ValueError):
    """The request cannot be carried out as asked: an unknown command or mode, a workspace that
    is not a directory, a schedule that does not parse, a built-in that cannot be deleted.

    A ValueError too, so callers inside the host that catch bad input keep working.
    """


class Invalid(BadRequest):
    """What was sent does not validate against its grammar or schema (a malformed rule, settings)."""


class StorageUnavailable(DomainError):
    """The store cannot save anything now: the disk is full, or the database is read-only.

    Not the caller's fault and not a bug: it passes once a person frees space or makes the
    database writable again, so the request may be retried then. `reason` is what a person
    reads ("the disk is full"); it is also the message.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ApprovalError(Exception):
    """An answer that cannot be applied (the base of the two below)."""


class ApprovalNotFound(ApprovalError, NotFound):
    """No approval has that id."""


class ApprovalClosed(ApprovalError, Conflict):
    """The approval was already answered, expired or cancelled."""
