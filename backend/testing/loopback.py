"""A uvicorn server run as a task of the caller's event loop: the loopback services tests stand up.

uvicorn has no event for "listening", only a `started` flag; this one sets an event, so a
test waits for it with a bound instead of polling the flag.
"""

from __future__ import annotations

import asyncio
import socket

import anyio
import uvicorn


class ListeningServer(uvicorn.Server):
    """uvicorn that says when it is listening."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.listening.set()


async def serve_in_task(server: ListeningServer, *, within: float) -> asyncio.Task[None]:
    """Start `server` on the running loop and return its task once it listens; a start that
    fails raises its own error, one that takes longer than `within` seconds a TimeoutError."""
    task = asyncio.get_running_loop().create_task(server.serve())
    listening = asyncio.ensure_future(server.listening.wait())
    try:
        with anyio.fail_after(within):
            await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
    if not server.listening.is_set():
        task.result()  # the start's own error, if it raised one
        raise RuntimeError("uvicorn stopped before it listened")
    return task
