"""Awaitables that are already done: what a store returns for a write it finished without waiting.

The embedded store commits a small write on the event loop's own thread when SQLite's write
lock is free (see `sqlite_thread`), so the write is over before the caller awaits anything.
Handing that back as a `Done` awaitable, not a coroutine, lets the event bus see it: a write still
under way it must run as a task behind a shield (a stop must not tear it), which costs two
more turns of the loop per event; a finished one needs neither.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")


class Done(Generic[T]):
    """An awaitable that gives `value` (or raises `error`) without waiting: lighter than a
    finished asyncio future, which would also need the running loop to make."""

    __slots__ = ("value", "error")

    def __init__(self, value: T | None = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error

    def __await__(self) -> Generator[Any, None, T]:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # None only with an error
        yield  # a generator, as __await__ must return an iterator; never reached


def is_done(awaitable: Awaitable[Any]) -> bool:
    """True for a write that is over: awaiting it never waits."""
    return isinstance(awaitable, Done)


def then(awaitable: Awaitable[T], fn: Callable[[T], U]) -> Awaitable[U]:
    """`fn` of what `awaitable` gives, done at once when `awaitable` is."""
    if isinstance(awaitable, Done):
        if awaitable.error is not None:
            return awaitable  # type: ignore[return-value]  # the error, as it is
        return Done(fn(awaitable.value))  # type: ignore[arg-type]
    return _then(awaitable, fn)


async def _then(awaitable: Awaitable[T], fn: Callable[[T], U]) -> U:
    return fn(await awaitable)
