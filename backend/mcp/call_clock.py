"""A tool call's clock: it stops while a person is being asked something on the call's behalf.

A server may ask the person a question (`elicitation/create`) or to sample the model in the middle
of a tool call. The person's answer is bounded by the approval timeout, not by the tool's
`call_timeout`: while a question of the call is open, the call's deadline is lifted, and the time
it had left is given back when the last question closes. And when the call ends (it returned,
failed, or was cancelled: its session stopped), a question of it still open is withdrawn, so an
answer sent afterwards is refused (409: the call ended) instead of going nowhere.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class CallClock:
    """The deadline of one tool call and the questions open on its behalf."""

    def __init__(self) -> None:
        self._deadline: asyncio.Timeout | None = None
        self._left: float | None = None  # what the deadline had left when a question stopped it
        self._questions: set[anyio.CancelScope] = set()
        self.ended = False

    @property
    def stopped(self) -> bool:
        """True while a question of the call is open (its deadline lifted)."""
        return bool(self._questions)

    @contextmanager
    def bound(self, deadline: asyncio.Timeout) -> Iterator[None]:
        """Inside the call's timeout: the clock moves that deadline (one attempt at a time)."""
        self._deadline = deadline
        if self._questions:
            self._stop()
        try:
            yield
        finally:
            self._deadline = None
            self._left = None

    @contextmanager
    def asking(self) -> Iterator[anyio.CancelScope]:
        """Around one question put to the person: the clock stops; the call ending cancels the scope."""
        scope = anyio.CancelScope()
        if self.ended:
            scope.cancel()
        if not self._questions:
            self._stop()
        self._questions.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._questions.discard(scope)
            if not self._questions:
                self._restart()

    def end(self) -> None:
        """The call is over: every question still open on its behalf is withdrawn."""
        self.ended = True
        self._deadline = None
        for scope in list(self._questions):
            scope.cancel()

    def _stop(self) -> None:
        deadline = self._deadline
        if deadline is None or deadline.expired() or (when := deadline.when()) is None:
            return
        self._left = max(0.0, when - asyncio.get_running_loop().time())
        deadline.reschedule(None)

    def _restart(self) -> None:
        deadline, left = self._deadline, self._left
        self._left = None
        if deadline is not None and left is not None and not deadline.expired():
            deadline.reschedule(asyncio.get_running_loop().time() + left)


_current: contextvars.ContextVar[CallClock | None] = contextvars.ContextVar("mcp_call_clock", default=None)


@contextmanager
def running(clock: CallClock) -> Iterator[None]:
    """While one call runs in this context: its clock is the one `current()` gives; it ends on exit."""
    token = _current.set(clock)
    try:
        yield
    finally:
        _current.reset(token)
        clock.end()


def current() -> CallClock | None:
    """The clock of the call running in this context, if any."""
    return _current.get()
