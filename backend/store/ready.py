"""Awaitables that are already done: what a store returns for a write it finished without waiting.

The embedded store commits a small write on the event loop's own thread when SQLite's write
lock is free (see `sqlite_thread`), so the write is over before the caller awaits anything.
Handing that back as a done future, not a coroutine, lets the event bus see it: a write still
under way it must run as a task behind a shield (a stop must not tear it), which costs two
more turns of the loop per event; a finished one needs neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
U = TypeVar("U")


def ready(value: T) -> asyncio.Future[T]:
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future


def failed(exc: BaseException) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    future.set_exception(exc)
    return future


def is_done(awaitable: Awaitable[Any]) -> bool:
    """True for a future that holds its result (or error) already: awaiting it never waits."""
    return isinstance(awaitable, asyncio.Future) and awaitable.done()


def then(awaitable: Awaitable[T], fn: Callable[[T], U]) -> Awaitable[U]:
    """`fn` of what `awaitable` gives, done at once when `awaitable` is."""
    if is_done(awaitable):
        assert isinstance(awaitable, asyncio.Future)
        if awaitable.exception() is not None:
            return awaitable  # type: ignore[return-value]  # the error, as it is
        return ready(fn(awaitable.result()))
    return _then(awaitable, fn)


async def _then(awaitable: Awaitable[T], fn: Callable[[T], U]) -> U:
    return fn(await awaitable)
