"""The host's HTTP API on a private loopback port, for runs without `overseer serve`.

`overseer run` has no web server of its own, yet the invoke_agent and cron tool servers are
thin clients of the host's API. This starts the same app on a free 127.0.0.1 port, in the same
event loop, so those tools work in the terminal too; it lives only as long as the run.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from backend.api.app import build_authenticator, create_app
from backend.config import Settings
from backend.app.host import Host
from backend.mcp.config import HostApi

SHUTDOWN_TIMEOUT = 10.0


@asynccontextmanager
async def host_with_local_api(settings: Settings, *, recover: bool = True) -> AsyncIterator[Host]:
    """A started Host whose API answers on a private loopback port (told to its tool servers)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # Listening before the tool servers start: a call that comes early waits in the backlog
    # instead of being refused.
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    host = Host(settings, host_api=HostApi(url=url, token=build_authenticator(settings).token))
    app = create_app(settings, host=host, url=url)
    # The host's life is ours, not the app's: no ASGI lifespan.
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    serving = asyncio.create_task(server.serve(sockets=[sock]), name="local-api")
    try:
        await host.start(recover=recover)
        try:
            yield host
        finally:
            await host.aclose()
    finally:
        server.should_exit = True
        await asyncio.wait({serving}, timeout=SHUTDOWN_TIMEOUT)
        sock.close()
