"""Shared pieces of the gateway tests: scripted replies, a progress log, the app on a port, stdio clients.

Everything waits on events with a bound (anyio.fail_after), never on time passing.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as wire
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from backend.api.server import OverseerServer
from backend.api.app import build_authenticator, create_app
from backend.app.host import Host
from backend.mcp.config import HostApi
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import only_servers_env, scripted_settings
from backend.testing.process import REPO
from backend.testing.script import ModelRequest, Script

BOUND = 60.0
"""Upper bound of any one wait in these tests; a healthy run takes a fraction of it."""

APPROVAL_ID = re.compile(r"\(approval ([0-9a-f]{32})\)")


def write_file(path: str = "x.txt", content: str = "hi") -> Reply:
    """A model turn that asks to write a file: the default policy asks for approval."""
    return Reply(
        tool_calls=[
            ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": content})
        ]
    )


@dataclass
class HeldReply:
    """A model reply that waits until the test lets it go, so the run is still in flight meanwhile."""

    reply: Reply
    released: threading.Event = field(default_factory=threading.Event)

    def __call__(self, request: ModelRequest) -> Reply:
        self.released.wait(BOUND)  # on the model server's worker thread, not the test's loop
        return self.reply


@dataclass
class ProgressLog:
    """Collects invoke_agent's progress notes; tells a test when an approval is waiting, and which."""

    notes: list[str] = field(default_factory=list)
    _approval: asyncio.Event = field(default_factory=asyncio.Event)
    approval_ids: list[str] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.notes.append(message or "")
        found = APPROVAL_ID.search(message or "")
        if found and "waiting for approval" in (message or "") and found.group(1) not in self.approval_ids:
            self.approval_ids.append(found.group(1))
            self._approval.set()

    async def approval(self) -> str:
        """The id of the first approval the run waited for."""
        with anyio.fail_after(BOUND):
            await self._approval.wait()
        return self.approval_ids[0]


@dataclass
class ServedApp:
    """The whole product on a loopback port, served from the test's own event loop."""

    url: str
    token: str
    host: Host
    model: ScriptedModelServer
    workspace: Path
    data_dir: Path
    app: Any
    server: Any
    serving: asyncio.Task[None]

    async def stop(self) -> None:
        """Shut the server down (as Ctrl-C on `overseer serve` does) and wait for it."""
        self.server.should_exit = True
        await asyncio.wait({self.serving}, timeout=BOUND)

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def client(self, *, token: str | None = None, header: str = "Authorization", **kwargs: Any) -> Client:
        """An MCP client over streamable HTTP with the token (or another credential)."""
        credential = token or self.token
        value = f"Bearer {credential}" if header == "Authorization" else credential
        http = create_mcp_http_client(headers={header: value}, timeout=httpx2.Timeout(30.0, read=BOUND))
        return Client(streamable_http_client(self.mcp_url, http_client=http), **kwargs)


class _Uvicorn(OverseerServer):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.up = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.up.set()


@asynccontextmanager
async def served_app(
    root: Path,
    script: Script | None = None,
    *,
    expose_tools: bool = False,
    pool: McpPool | None = None,
    **overrides: Any,
) -> AsyncIterator[ServedApp]:
    """`overseer serve`, in this loop: the app (with `/mcp`) and its host, against a scripted model.

    `pool`: MCP servers already started (shared by a test module); by default the host starts its own.
    `overrides`: settings of the host (`mcp_servers`, ...).
    """
    with ScriptedModelServer(script) as model:
        settings = scripted_settings(root, model, **overrides)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        host = Host(settings, pool=pool, host_api=HostApi(url=url, token=build_authenticator(settings).token))
        app = create_app(settings, host=host, url=url, expose_tools=expose_tools)
        server = _Uvicorn(uvicorn.Config(app, lifespan="on", log_level="warning"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        served = ServedApp(
            url=url,
            token=app.state.auth.token,
            host=app.state.host,
            model=model,
            workspace=settings.resolved_workspace,
            data_dir=settings.data_dir,
            app=app,
            server=server,
            serving=serving,
        )
        try:
            with anyio.fail_after(BOUND):
                await server.up.wait()
            yield served
        finally:
            await served.stop()
            sock.close()


def stdio_params(args: list[str], env: dict[str, str], *, cwd: Path = REPO) -> StdioServerParameters:
    """`python -m backend.cli ARGS` as an MCP stdio server, started in `cwd`."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "backend.cli", *args], env=env, cwd=str(cwd)
    )


def embedded_env(root: Path, model: ScriptedModelServer) -> dict[str, str]:
    """Environment of an `overseer mcp` child: its own data dir and workspace, the scripted model,
    and of the built-in tool servers only the two the scripts call."""
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    keep = {
        k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    }
    return keep | {
        "OVERSEER_DATA_DIR": str(root / "data"),
        "OVERSEER_WORKSPACE": str(workspace),
        "OVERSEER_MODEL": "openai/scripted",
        "OVERSEER_API_BASE": model.openai_base,
        "OVERSEER_API_KEY": "scripted",
        "OVERSEER_RETRY_BACKOFF": "0.01",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **only_servers_env("file", "shell"),
    }


def accept(decision: str, message: str = "") -> wire.ElicitResult:
    return wire.ElicitResult(action="accept", content={"decision": decision, "message": message})


async def session_status(host: Host, session_id: str, wanted: str) -> str:
    """Wait (bounded) until the session's stored status is `wanted`, following its status events."""
    events = host.bus.subscribe(session_id)
    try:
        with anyio.fail_after(BOUND):
            while (await host.store.get_session(session_id)).status != wanted:
                await events.get()
        return wanted
    finally:
        host.bus.unsubscribe(events)
