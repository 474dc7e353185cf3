"""The terminal's "ready" line: `overseer serve` says so once its HTTP server accepts connections.

Uvicorn's own "running on" line is a log record on stderr, easy to miss among the start-up lines,
and everything `overseer serve` printed before it was said while the server was still starting
(the host's start-up, its MCP servers, can take a while). So one line, printed after the socket
listens, names the dashboard's URL and how to sign in: the line a person waits for.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import TextIO

import uvicorn

from backend.api.server import OverseerServer

READY_PREFIX = "Overseer is ready"
"""How the ready line begins (what a script or a test waits for)."""


def ready_line(*, url: str, token_link: str | None) -> str:
    """The line: the dashboard's URL and, single-user, the link that signs in with the token; with
    `users:` configured a person signs in with their own name and password."""
    if token_link is not None:
        return f"{READY_PREFIX}: open {url} (sign in with this link, it carries your token: {token_link})"
    return f"{READY_PREFIX}: open {url} and sign in with your username and password"


class ReadyServer(OverseerServer):
    """OverseerServer that calls `on_ready` once, after its sockets listen (never if it failed to)."""

    def __init__(self, config: uvicorn.Config, *, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and not self.should_exit:
            self._on_ready()


def print_ready(line: str, out: TextIO | None = None) -> Callable[[], None]:
    """An `on_ready` that prints `line` and flushes (stdout is block-buffered when piped)."""

    def announce() -> None:
        print(line, file=out or sys.stdout, flush=True)

    return announce
