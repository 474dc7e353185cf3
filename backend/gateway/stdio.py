"""`overseer mcp` without `--host-url`: the gateway over stdio, with a host embedded in this process.

The host runs on the same data dir as `overseer serve` would, with its private loopback API for
the tool servers that call it back. It does not recover sessions or fire cron jobs: those belong
to `overseer serve`, and two processes resuming the same session would run it twice. While
serving, the SDK points fds 0 and 1 away from the wire, so nothing the host prints can corrupt
the protocol stream.
"""

from __future__ import annotations

import asyncio
import contextlib

from backend.api.local import host_with_local_api
from backend.config import Settings
from backend.engine.models.client import litellm
from backend.gateway.server import Gateway, build_server


async def serve_embedded(settings: Settings, *, expose_tools: bool = False) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects."""
    # LiteLLM's import takes seconds; paid while the client connects, not on its first invoke.
    warm = asyncio.create_task(asyncio.to_thread(litellm))
    try:
        async with host_with_local_api(settings, recover=False) as host:
            server = build_server(Gateway(host, expose_tools=expose_tools))
            await server.run_stdio_async()
    finally:
        with contextlib.suppress(Exception):
            await warm
