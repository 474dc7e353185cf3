"""Domain errors: one base class, a few kinds. The API maps each kind to one HTTP status."""

from __future__ import annotations


class DomainError(Exception):
    """A request the domain refuses; the message is safe to show to whoever asked."""


class NotFound(DomainError, KeyError):
    """No such thing (session, approval, schedule, ...)."""

    def __str__(self) -> str:  # KeyError's str() would be the repr of its argument
        return str(self.args[0]) if self.args else ""


class Conflict(DomainError):
    """The thing exists but its state does not allow this now (answered, running, ...)."""


class Invalid(DomainError, ValueError):
    """The request itself is wrong (a malformed rule, a bad value)."""


class Forbidden(DomainError):
    """The caller's role does not allow this."""
