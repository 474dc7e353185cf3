"""Browser fixtures: the real server (scripted model, real MCP servers) and Debian's Chromium.

`serve(script, **settings)` starts the whole product on a free port; `new_page(h, ...)` opens a
logged-in dashboard (`{url}/login?token=...` sets the HttpOnly cookie and redirects to `/`);
`page` is that for the test's `server`. Nothing here downloads a browser: Playwright drives
/usr/bin/chromium. Tests wait with Playwright's auto-waiting `expect`, never with sleeps.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from backend.testing.harness import only_servers
from backend.testing.web import WebHarness, serve_scripted
from mcp_servers.browser.sessions import LAUNCH_ARGS

from playwright import sync_api as playwright_sync
from playwright.sync_api import Browser, BrowserContext, Page, expect

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = list(LAUNCH_ARGS)
"""The browser server's own launch flags: offline, sandbox-free, as root in CI."""
expect.set_options(timeout=30_000)
"""A bound, not a wait: a first approval card on a loaded 2-core machine took more than 15 s."""


def _dashboard_built() -> bool:
    """Build web/dist when it is missing or older than the sources (needs npm and node_modules)."""
    index = WEB / "dist" / "index.html"
    sources = [p for p in (WEB / "src").rglob("*") if p.is_file()] + [WEB / "index.html"]
    fresh = index.is_file() and index.stat().st_mtime >= max(p.stat().st_mtime for p in sources)
    if fresh:
        return True
    if shutil.which("npm") is None or not (WEB / "node_modules").is_dir():
        return index.is_file()
    subprocess.run(["npm", "run", "build"], cwd=WEB, check=True, capture_output=True, timeout=300)
    return index.is_file()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    # Missing parts fail loudly: `make test` installs both, and a skipped browser suite is no test.
    if not CHROMIUM.exists():
        pytest.fail("browser tests need Debian's chromium: run `make test` (or apt-get install -y chromium)")
    if not _dashboard_built():
        pytest.fail("the dashboard is not built: run `make test` (or cd web && npm ci && npm run build)")
    with playwright_sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


DEFAULT_SERVERS = ("file", "shell")
"""The built-in servers a test's server starts unless it names others: the ones the scripts call."""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., WebHarness]]:
    """`serve(script, servers=("file", "shell"), **settings)`: a running server for this test,
    stopped at teardown, with only the built-in tool servers named (and any in `mcp_servers`)."""
    with ExitStack() as stack:
        count = 0

        def start(script: Any = None, *, servers: tuple[str, ...] = DEFAULT_SERVERS, **settings: Any) -> WebHarness:
            nonlocal count
            count += 1
            settings["mcp_servers"] = only_servers(*servers) | settings.get("mcp_servers", {})
            return stack.enter_context(serve_scripted(tmp_path / f"server{count}", script, **settings))

        yield start


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[..., Page]]:
    """`new_page(h, viewport=..., init_script=..., clock=False)`: a logged-in dashboard.

    `init_script` runs before any page script (e.g. to fake `document.hidden`); `clock=True`
    installs Playwright's fake clock before the app starts, so a test can move time forward.
    """
    contexts: list[BrowserContext] = []

    def open_page(
        h: WebHarness,
        *,
        viewport: dict[str, int] | None = None,
        init_script: str | None = None,
        clock: bool = False,
        path: str = "",
    ) -> Page:
        context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900})
        contexts.append(context)
        if init_script:
            context.add_init_script(init_script)
        page = context.new_page()
        if clock:
            page.clock.install()
        page.goto(h.login_url)
        expect(page.get_by_test_id("pending-counter")).to_be_visible()
        if path:
            page.goto(f"{h.url}/{path}")
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def page(serve: Callable[..., WebHarness], new_page: Callable[..., Page]) -> Page:
    """A logged-in dashboard on a server whose model has nothing scripted."""
    return new_page(serve([]))
