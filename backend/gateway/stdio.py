"""`overseer mcp` without `--host-url`: the gateway over stdio, with a host embedded in this process.

The host runs on the same data dir as `overseer serve` would, with its private loopback API for
the tool servers that call it back; the command line builds it (`backend/api/local.py`) and hands
it over, so the gateway needs nothing of the REST app. It does not recover sessions or fire cron
jobs: those belong to `overseer serve`, and two processes resuming the same session would run it
twice. While serving, the SDK points fds 0 and 1 away from the wire, so nothing the host prints
can corrupt the protocol stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AbstractAsyncContextManager

from backend.app.model_settings import warm_up
from backend.app.services import AppServices
from backend.gateway.server import Gateway, build_server


async def serve_embedded(
    embedded: AbstractAsyncContextManager[AppServices], *, expose_tools: bool = False
) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects, over the services of the host
    `embedded` starts (and stops when the client is gone)."""
    # The model library's import takes seconds; paid while the client connects, not on its first invoke.
    warm = asyncio.create_task(warm_up())
    try:
        async with embedded as services:
            server = build_server(Gateway(services, expose_tools=expose_tools))
            await server.run_stdio_async()
    finally:
        with contextlib.suppress(Exception):
            await warm
