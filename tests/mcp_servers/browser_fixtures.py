"""Fixtures for the browser server tests: a small site on 127.0.0.1, one shared server, process trees.

Test modules bind the fixtures they use to module names (`site = browser_fixtures.site`), since
conftest.py belongs to the other tool servers, and import its helpers by name.
"""

from __future__ import annotations

import asyncio
import functools
import html
import os
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio
from mcp import Client
from mcp_types import CallToolResult

from mcp_servers.browser.server import create_server

SITE_DIR = Path(__file__).resolve().parent / "browser_site"
SLOW_PAGE_HOLD_SECONDS = 60.0
"""The most a request for /slow is held; the site releases it sooner when it shuts down."""

CLIENT_START_SECONDS = 30.0


class SiteServer(ThreadingHTTPServer):
    """The test site: static pages from `browser_site/` plus a few dynamic routes."""

    daemon_threads = True  # a held /slow request must not keep the test run alive

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), functools.partial(SiteHandler, directory=str(SITE_DIR)))
        self.release = threading.Event()

    def url(self, path: str) -> str:
        """The absolute URL of `path` on this site."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/{path.lstrip('/')}"


class SiteHandler(SimpleHTTPRequestHandler):
    """Static files, plus /submit (POST), /search, /login, /whoami, /long and /slow."""

    server: SiteServer

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        if parts.path == "/search":
            self._page("Search results", f"<h1>Results for {html.escape(query.get('q', ''))}</h1>")
        elif parts.path == "/login":
            user = query.get("user", "nobody")
            self._page("Signed in", f"<p>Signed in as {html.escape(user)}</p>", cookie=f"user={user}; Path=/")
        elif parts.path == "/whoami":
            self._page("Who am I", f"<p>{html.escape(self._signed_in_as())}</p>")
        elif parts.path == "/long":
            lines = int(query.get("lines", "100"))
            self._page(
                "Long page", "".join(f"<p>Paragraph number {n} of the long page.</p>" for n in range(lines))
            )
        elif parts.path == "/slow":
            self.server.release.wait(SLOW_PAGE_HOLD_SECONDS)
            self._page("Slow", "<p>Finally</p>")
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/submit":
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length", "0"))
        form = {key: values[0] for key, values in parse_qs(self.rfile.read(length).decode()).items()}
        summary = (
            f"Thanks, {form.get('name', '')}! Colour: {form.get('colour', '')}. "
            f"Gift wrap: {form.get('gift', 'no')}. Note: {form.get('note', '')}"
        )
        self._page("Order received", f"<p id='summary'>{html.escape(summary)}</p>")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: request lines would bury test output."""

    def _signed_in_as(self) -> str:
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "user":
                return f"Signed in as {value}"
        return "Nobody is signed in"

    def _page(self, title: str, body: str, *, cookie: str | None = None) -> None:
        payload = (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body>{body}</body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        if cookie:
            self.send_header("Set-Cookie", cookie)
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    """The test site, served by a thread on a free loopback port for the whole module."""
    server = SiteServer()
    thread = threading.Thread(target=server.serve_forever, name="browser-test-site", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One managed (trust_meta) browser server and in-memory client for the module: one Chromium.

    The client lives in a task of its own, so entering and leaving it happen in one task
    whichever tasks pytest-asyncio runs the fixture's setup and teardown in.
    """
    root = tmp_path_factory.mktemp("browser-default-root")
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with Client(create_server(root, trust_meta=True)) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    client = await asyncio.wait_for(asyncio.shield(ready), CLIENT_START_SECONDS)
    try:
        yield client
    finally:
        stop.set()
        await asyncio.wait_for(holder, CLIENT_START_SECONDS)


@dataclass(kw_only=True)
class BrowserCaller:
    """Calls tools on the shared server as one session of one workspace, as the host would."""

    client: Client
    workspace: Path
    session_id: str

    async def call(self, tool: str, **arguments: Any) -> CallToolResult:
        """Call `tool` with this session's `_meta`."""
        meta = {"overseer/workspace": str(self.workspace), "overseer/session_id": self.session_id}
        return await self.client.call_tool(tool, arguments, meta=meta)

    def as_session(self, session_id: str) -> BrowserCaller:
        """The same workspace, seen from another session."""
        return BrowserCaller(client=self.client, workspace=self.workspace, session_id=session_id)


@pytest.fixture
def browser(shared_client: Client, tmp_path: Path, request: pytest.FixtureRequest) -> BrowserCaller:
    """A fresh session (named after the test) with its own workspace on the shared server."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return BrowserCaller(client=shared_client, workspace=workspace.resolve(), session_id=request.node.name)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def command_line(pid: int) -> str:
    """The process's command line with spaces between arguments ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def processes_running(fragment: str) -> list[int]:
    """Pids of live processes whose command line contains `fragment`."""
    return [
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and fragment in command_line(int(entry))
    ]
