"""The real web server (API, WebSocket, dashboard, engine) on a free port, for browser tests.

Uvicorn serves the app on its own event loop in a thread; `WebHarness.call` runs a coroutine on
that loop, so a test can look into the store while the server keeps running. Its file, shell,
memory, cron and invoke_agent servers run in memory (backend/testing/in_process.py).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import uvicorn

from backend.api.app import build_authenticator, create_app
from backend.api.server import OverseerServer
from backend.app.host import Host
from backend.mcp.config import HostApi
from backend.testing.harness import scripted_settings
from backend.testing.in_process import in_process_transport
from backend.testing.model_server import ScriptedModelServer
from backend.testing.script import Script

T = TypeVar("T")
START_TIMEOUT = 30.0


@dataclass(kw_only=True)
class WebHarness:
    """A running server: where it is, how to log in, and a way into its event loop."""

    url: str
    token: str
    model: ScriptedModelServer
    host: Host
    data_dir: Path
    workspace: Path
    loop: asyncio.AbstractEventLoop

    def call(self, coro: Awaitable[T], timeout: float = 30) -> T:
        """Run a coroutine on the server's loop and return its result."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]
        return future.result(timeout)

    @property
    def login_url(self) -> str:
        return f"{self.url}/login?token={self.token}"


class _Server(OverseerServer):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serve_scripted(root: Path, script: Script | None = None, **overrides: Any) -> Iterator[WebHarness]:
    """Start the whole product against a scripted model; stop it on exit."""
    with ScriptedModelServer(script) as model:
        settings = scripted_settings(root, model, **overrides)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        host_api = HostApi(url=url, token=build_authenticator(settings).token)
        host = Host(settings, host_api=host_api, transport_factory=in_process_transport)
        app = create_app(settings, host=host, url=url)
        server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            if not server.ready.wait(START_TIMEOUT) or server.loop is None:
                raise RuntimeError("the web server did not start")
            yield WebHarness(
                url=f"http://127.0.0.1:{port}",
                token=app.state.auth.token,
                model=model,
                host=app.state.host,
                data_dir=settings.data_dir,
                workspace=settings.resolved_workspace,
                loop=server.loop,
            )
        finally:
            server.should_exit = True
            thread.join(START_TIMEOUT)
            sock.close()
