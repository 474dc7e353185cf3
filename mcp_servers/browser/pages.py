"""Moving a tab between pages (checked URLs, history, waiting out a load) and reporting where it is."""

from __future__ import annotations

import contextlib
from typing import Literal
from urllib.parse import urlsplit

from mcp.server.mcpserver.exceptions import ToolError
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from mcp_servers.browser.errors import navigation_error, playwright_errors
from mcp_servers.browser.sessions import BrowserSession
from mcp_servers.browser.snapshot import take_snapshot

ALLOWED_SCHEMES = ("http", "https")
BLANK = "about:blank"
REPORT_MAX_CHARS = 20_000
"""The outline that comes with an action's result is shorter than a full `snapshot`."""

ERROR_PAGE_WAIT_SECONDS = 5.0
LOAD_WAIT_SECONDS = 5.0
"""After the document is parsed, how long to wait for its images and frames before reading it."""


def check_url(url: str) -> str:
    """`url` stripped, or a `ToolError` unless it is http(s) with a host, or about:blank."""
    stripped = url.strip()
    if stripped == BLANK:
        return stripped
    parts = urlsplit(stripped)
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        hint = f" Did you mean https://{stripped}?" if not parts.scheme and stripped else ""
        raise ToolError(
            f"refused to open {url!r}: only http:// and https:// URLs (and about:blank) can be opened.{hint}"
        )
    if not parts.hostname:
        raise ToolError(f"refused to open {url!r}: the URL has no host name")
    return stripped


async def open_url(page: Page, url: str, timeout: float) -> Response | None:
    """Load the checked `url` in `page`; failures name the URL and the cause.

    Only the parsed document is waited for (within `timeout`); its load event briefly, since a
    page whose last image never arrives is still worth reading.
    """
    try:
        response = await page.goto(url, wait_until="domcontentloaded")
    except PlaywrightError as exc:
        if "interrupted by another navigation" in exc.message and "chrome-error://" not in exc.message:
            # The page sent itself elsewhere (a script redirect): where it ended up is the answer.
            await settle(page, timeout)
            return None
        if "net::ERR_" in exc.message and "net::ERR_ABORTED" not in exc.message:
            # Chromium is about to show its error page; let it, or it would interrupt the next goto.
            with contextlib.suppress(PlaywrightError):
                await page.wait_for_url("chrome-error://**", timeout=ERROR_PAGE_WAIT_SECONDS * 1000)
        raise navigation_error(url, exc, timeout) from exc
    await settle(page, timeout)
    return response


async def step_history(page: Page, direction: Literal["back", "forward"], timeout: float) -> Response | None:
    """Go one step back or forward in the tab's history; a `ToolError` when there is no such step."""
    before = page.url
    try:
        step = page.go_back if direction == "back" else page.go_forward
        response = await step(wait_until="domcontentloaded")
    except PlaywrightError as exc:
        raise navigation_error(
            f"the {'previous' if direction == 'back' else 'next'} page", exc, timeout
        ) from exc
    # Playwright answers None both for "no history" and for a same-document step (#anchor).
    if response is None and page.url == before:
        where = "earlier" if direction == "back" else "later"
        raise ToolError(f"there is no {where} page in this tab's history; use navigate instead")
    await settle(page, timeout)
    return response


async def settle(page: Page, timeout: float) -> None:
    """Wait (bounded) for a navigation an action started to finish loading; no navigation, no wait.

    The document itself gets the navigation `timeout`; its images and frames `LOAD_WAIT_SECONDS` more.
    """
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("domcontentloaded", timeout=timeout * 1000)
        await page.wait_for_load_state("load", timeout=min(timeout, LOAD_WAIT_SECONDS) * 1000)


async def describe_page(
    session: BrowserSession, page: Page, *, response: Response | None = None, limit: int = REPORT_MAX_CHARS
) -> str:
    """What the model reads after acting on a page: URL, title, HTTP status if it failed, tabs, outline."""
    snapshot = await take_snapshot(page, session.next_ref, limit=limit)
    session.next_ref = snapshot.next_ref
    with playwright_errors("reading the page title"):
        title = await page.title()
    header = [f"URL: {page.url}", f"Title: {title}"]
    if response is not None and response.status >= 400:
        header.append(f"HTTP status: {response.status} {response.status_text}".rstrip())
    tabs = session.tabs
    if len(tabs) > 1 and page in tabs:
        header.append(f"Tab {session.index_of(page)} is active; {len(tabs)} tabs are open (numbered from 0)")
    return "\n".join(header) + "\n\n" + (snapshot.text or "[the page shows no text]")
