"""One Chromium per server process, launched on first use, and an isolated context per session.

Sessions share the browser process but never cookies, storage or tabs: each gets its own
`BrowserContext`. Contexts of the least recently used sessions are closed beyond
`MAX_SESSIONS`, so a long-lived host does not accumulate them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from mcp_servers.browser.errors import message_of

LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
MAX_SESSIONS = 20
"""Sessions whose contexts stay open; the least recently used idle one is closed beyond this."""

ACTION_TIMEOUT_SECONDS = 10.0
"""How long a click, a fill or a page script of ours may wait for the page."""

CLOSE_TIMEOUT_SECONDS = 10.0
CHROMIUM_ENV = "OVERSEER_CHROMIUM"
SYSTEM_CHROMIUM = "/usr/bin/chromium"
DEFAULT_SESSION = "default"
"""The session of every call that carries no trusted session id (a standalone server has one)."""


def default_chromium() -> Path:
    """The Chromium to drive: $OVERSEER_CHROMIUM, else Debian's /usr/bin/chromium (never a download)."""
    return Path(os.environ.get(CHROMIUM_ENV) or SYSTEM_CHROMIUM)


@dataclass(frozen=True, kw_only=True)
class BrowserOptions:
    """How to launch Chromium and how long a page may take to load."""

    chromium: Path
    headed: bool = False
    navigation_timeout: float = 30.0
    """Seconds a navigation may take; also the limit for an `evaluate` script."""


@dataclass(kw_only=True)
class BrowserSession:
    """One session's browser state: its own context, its tabs, the active tab and its ref counter."""

    context: BrowserContext
    active: Page | None = None
    next_ref: int = 1
    """The number of the next element ref; never reused within the session, so stale refs fail."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0

    @property
    def tabs(self) -> list[Page]:
        """Open tabs in the order they were opened (pages the site opened included)."""
        return [page for page in self.context.pages if not page.is_closed()]

    async def page(self) -> Page:
        """The active tab; when it was closed, the last open one, or a new blank tab."""
        if self.active is None or self.active.is_closed():
            tabs = self.tabs
            self.active = tabs[-1] if tabs else await self.context.new_page()
        return self.active

    def tab(self, index: int) -> Page:
        """The tab at `index`, or a `ToolError` listing the valid range."""
        tabs = self.tabs
        if not 0 <= index < len(tabs):
            raise ToolError(
                f"there is no tab {index}: {len(tabs)} tab(s) are open, numbered 0 to {len(tabs) - 1}. "
                "Call tabs with action 'list'."
            )
        return tabs[index]

    def index_of(self, page: Page) -> int:
        """The position of `page` among the open tabs."""
        return self.tabs.index(page)


class BrowserPool:
    """The server's Chromium (launched lazily, relaunched if it died) and its sessions' contexts."""

    def __init__(self, options: BrowserOptions) -> None:
        self.options = options
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._sessions: OrderedDict[str, BrowserSession] = OrderedDict()
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def session(self, session_id: str) -> AsyncIterator[BrowserSession]:
        """Hold `session_id`'s session (created on first use) for one tool call.

        Calls of one session run one at a time, since they share its tabs; sessions run in parallel.
        """
        async with self._lock:
            session = await self._checkout(session_id)
        try:
            async with session.lock:
                yield session
        finally:
            session.users -= 1

    async def close(self) -> None:
        """Close every context, the browser and the Playwright driver. Bounded; safe to call twice."""
        browser, self._browser = self._browser, None
        driver, self._playwright = self._playwright, None
        self._sessions.clear()
        if browser is not None:
            with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS), contextlib.suppress(PlaywrightError):
                await browser.close()
        if driver is not None:
            # Stopping the driver also kills a browser that would not close in time.
            with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS), contextlib.suppress(PlaywrightError):
                await driver.stop()

    async def _checkout(self, session_id: str) -> BrowserSession:
        browser = await self._running_browser()
        session = self._sessions.get(session_id)
        if session is None:
            try:
                context = await browser.new_context(accept_downloads=False)
            except PlaywrightError as exc:
                raise ToolError(f"cannot open a browser context: {message_of(exc)}. Try again.") from exc
            context.set_default_navigation_timeout(self.options.navigation_timeout * 1000)
            context.set_default_timeout(ACTION_TIMEOUT_SECONDS * 1000)
            session = BrowserSession(context=context)
            self._sessions[session_id] = session
        self._sessions.move_to_end(session_id)
        session.users += 1
        await self._close_idle_sessions()
        return session

    async def _close_idle_sessions(self) -> None:
        excess = len(self._sessions) - MAX_SESSIONS
        # Oldest first; a session in use is kept even if that leaves the pool over its bound.
        idle = [sid for sid, session in self._sessions.items() if session.users == 0][: max(excess, 0)]
        for session_id in idle:
            session = self._sessions.pop(session_id)
            with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS), contextlib.suppress(PlaywrightError):
                await session.context.close()

    async def _running_browser(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        # First use, or the browser died (crashed, killed): its contexts went with it.
        self._sessions.clear()
        self._browser = None
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        chromium = self.options.chromium
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=chromium,
                headless=not self.options.headed,
                args=list(LAUNCH_ARGS),
            )
        except PlaywrightError as exc:
            raise ToolError(
                f"cannot start Chromium at {chromium}: {message_of(exc)}. Install Chromium "
                "(e.g. apt-get install chromium) or start the browser server with --chromium PATH."
            ) from exc
        return self._browser
