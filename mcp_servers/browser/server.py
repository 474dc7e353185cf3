"""The browser tool server: drive a real Chromium through page outlines whose elements have refs."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal, assert_never

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field

from mcp_servers._shared.workspace import SESSION_META_KEY, workspace_root
from mcp_servers.browser.errors import playwright_errors
from mcp_servers.browser.pages import check_url, describe_page, open_url, settle, step_history
from mcp_servers.browser.screenshots import IMAGE_MAX_BYTES, save_screenshot
from mcp_servers.browser.scripts import run_script
from mcp_servers.browser.sessions import (
    DEFAULT_SESSION,
    BrowserOptions,
    BrowserPool,
    BrowserSession,
    default_chromium,
)
from mcp_servers.browser.snapshot import SNAPSHOT_MAX_CHARS, locate

# Acting on a page can submit forms and reach any site, but it only changes what the tab shows.
INTERACTS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True
)
READS_PAGE = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
# A screenshot writes a new file into the workspace each time; it never replaces one.
SAVES_IMAGE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
# One tool lists, opens (possibly at a URL), switches and closes tabs: it is honest only as "acts".
MANAGES_TABS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True
)
# A script can do anything the page can: delete data on the site, post as the user.
RUNS_SCRIPTS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=True
)

TabAction = Literal["list", "new", "switch", "close"]
TAB_TITLE_SECONDS = 2.0

INSTRUCTIONS = (
    "A real Chromium browser. navigate opens a page and returns its outline, where elements you can "
    "act on carry refs like [ref=e12]; pass a ref to click, type or select. Actions return the new "
    "outline. A ref stops working when the page changes: take a new snapshot. screenshot also saves a "
    "PNG under screenshots/ in the workspace."
)

_OPTIONS_SCRIPT = (
    "el => el.tagName === 'SELECT' ? Array.from(el.options, o => ({value: o.value, label: o.label})) : null"
)


def create_server(
    root: Path,
    *,
    trust_meta: bool,
    chromium: Path | str | None = None,
    headed: bool = False,
    navigation_timeout: float = 30.0,
) -> MCPServer:
    """Build the browser server; screenshots are saved in the workspace `root`.

    With `trust_meta` (the host launched us) a call's `_meta["overseer/workspace"]` replaces
    `root` and `_meta["overseer/session_id"]` picks the session's own browser context; otherwise
    every call belongs to one implicit session. Chromium starts on the first tool call and is
    closed when the server stops.
    """
    options = BrowserOptions(
        chromium=Path(chromium) if chromium else default_chromium(),
        headed=headed,
        navigation_timeout=navigation_timeout,
    )
    pool = BrowserPool(options)
    timeout = options.navigation_timeout

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            # Shielded: a cancelled server must still close Chromium, or it outlives us.
            with anyio.CancelScope(shield=True):
                await pool.close()

    server = MCPServer("browser", instructions=INSTRUCTIONS, lifespan=lifespan)

    def session_id(ctx: Context) -> str:
        meta = ctx.request_context.meta
        raw = meta.get(SESSION_META_KEY) if trust_meta and meta else None
        return raw if isinstance(raw, str) and raw else DEFAULT_SESSION

    @contextlib.asynccontextmanager
    async def active_tab(ctx: Context) -> AsyncIterator[tuple[BrowserSession, Page]]:
        async with pool.session(session_id(ctx)) as session:
            with playwright_errors("opening a tab"):
                page = await session.page()
            yield session, page

    @server.tool(annotations=INTERACTS)
    async def navigate(url: str, ctx: Context) -> str:
        """Open an http(s) URL in the active tab and return the page's outline with element refs."""
        target = check_url(url)
        async with active_tab(ctx) as (session, page):
            response = await open_url(page, target, timeout)
            return await describe_page(session, page, response=response)

    @server.tool(annotations=INTERACTS)
    async def back(ctx: Context) -> str:
        """Go back one page in the active tab's history and return that page's outline."""
        async with active_tab(ctx) as (session, page):
            response = await step_history(page, "back", timeout)
            return await describe_page(session, page, response=response)

    @server.tool(annotations=INTERACTS)
    async def forward(ctx: Context) -> str:
        """Go forward one page in the active tab's history and return that page's outline."""
        async with active_tab(ctx) as (session, page):
            response = await step_history(page, "forward", timeout)
            return await describe_page(session, page, response=response)

    @server.tool(annotations=READS_PAGE)
    async def snapshot(ctx: Context) -> str:
        """The active tab's URL, title and outline: text, and elements with refs like [ref=e12].

        Refs stay the same while the page stays; pass them to click, type and select.
        At most 40 KB of outline is returned.
        """
        async with active_tab(ctx) as (session, page):
            return await describe_page(session, page, limit=SNAPSHOT_MAX_CHARS)

    @server.tool(annotations=INTERACTS)
    async def click(ref: str, ctx: Context) -> str:
        """Click the element with this ref (from the latest outline) and return the resulting outline."""
        async with active_tab(ctx) as (session, page):
            element = await locate(page, ref)
            with playwright_errors(f"clicking {ref}"):
                await element.click()
            await settle(page, timeout)
            return await describe_page(session, page)

    @server.tool(name="type", annotations=INTERACTS)
    async def type_text(
        ref: str,
        text: str,
        ctx: Context,
        submit: Annotated[bool, Field(description="press Enter afterwards, e.g. to send a form")] = False,
    ) -> str:
        """Replace the text of the input, textarea or editable element with this ref.

        With `submit` Enter is pressed afterwards and the resulting outline is returned.
        """
        async with active_tab(ctx) as (session, page):
            element = await locate(page, ref)
            with playwright_errors(f"typing into {ref}"):
                await element.fill(text)
                if submit:
                    await element.press("Enter")
            if not submit:
                return f"Typed {len(text)} characters into {ref}."
            await settle(page, timeout)
            return await describe_page(session, page)

    @server.tool(annotations=INTERACTS)
    async def press(key: str, ctx: Context) -> str:
        """Press a key or chord on the focused element (or the page): Enter, Tab, Escape, ArrowDown,
        PageDown, Control+A, Shift+Tab... Returns the resulting outline."""
        async with active_tab(ctx) as (session, page):
            focused = page.locator(":focus")
            with playwright_errors(f"pressing {key!r} (key names look like Enter, ArrowDown, Control+A)"):
                # An element's press waits for a navigation it starts (a form sent by Enter);
                # the page keyboard's would return before it.
                if await focused.count():
                    await focused.last.press(key)
                else:
                    await page.keyboard.press(key)
            await settle(page, timeout)
            return await describe_page(session, page)

    @server.tool(annotations=INTERACTS)
    async def select(ref: str, value: str, ctx: Context) -> str:
        """Choose the option with this value or visible label in the <select> with this ref."""
        async with active_tab(ctx) as (session, page):
            element = await locate(page, ref)
            with playwright_errors(f"selecting in {ref}"):
                options: list[dict[str, str]] | None = await element.evaluate(_OPTIONS_SCRIPT)
            if options is None:
                raise ToolError(f"{ref} is not a <select>; for other kinds of list, click the option's ref")
            chosen = _matching_option(options, value)
            if chosen is None:
                labels = ", ".join(repr(option["label"]) for option in options[:50])
                raise ToolError(f"{ref} has no option {value!r}; its options are: {labels}")
            with playwright_errors(f"selecting in {ref}"):
                await element.select_option(value=chosen)
            await settle(page, timeout)
            return await describe_page(session, page)

    @server.tool(annotations=SAVES_IMAGE)
    async def screenshot(
        ctx: Context,
        full_page: Annotated[
            bool, Field(description="the whole scrollable page, not just the viewport")
        ] = False,
    ) -> CallToolResult:
        """Screenshot the active tab as PNG: returned as an image and saved under screenshots/."""
        workspace = workspace_root(root, ctx.request_context.meta, trust_meta=trust_meta)
        async with active_tab(ctx) as (_, page):
            with playwright_errors("taking the screenshot"):
                png = await page.screenshot(full_page=full_page, type="png")
            url = page.url
        shown = save_screenshot(workspace, png)
        content: list[TextContent | ImageContent] = [
            TextContent(type="text", text=f"Screenshot of {url} saved to {shown} ({len(png)} bytes).")
        ]
        if len(png) <= IMAGE_MAX_BYTES:
            data = base64.b64encode(png).decode("ascii")
            content.append(ImageContent(type="image", data=data, mime_type="image/png"))
        else:
            content[0].text += " It is too large to show here; take one without full_page."
        return CallToolResult(content=content)

    @server.tool(annotations=MANAGES_TABS)
    async def tabs(
        action: TabAction,
        ctx: Context,
        index: Annotated[int | None, Field(ge=0, description="the tab, for switch and close")] = None,
    ) -> str:
        """List the session's tabs, open a new blank one (then call navigate), switch to one, or close one.

        Tabs are numbered from 0 in the order they were opened; close without index closes the active one.
        """
        # No URL here on purpose: opening a site is navigate's job, which the host's policy and
        # domain rules judge; a URL on tabs would be a way round them.
        if index is not None and action not in ("switch", "close"):
            raise ToolError("index is only used with actions 'switch' and 'close'")
        async with pool.session(session_id(ctx)) as session:
            if action == "list":
                return await _list_tabs(session)
            elif action == "new":
                with playwright_errors("opening a tab"):
                    page = await session.context.new_page()
                session.active = page
                return await describe_page(session, page)
            elif action == "switch":
                if index is None:
                    raise ToolError("switch needs the index of a tab; call tabs with action 'list'")
                page = session.tab(index)
                with playwright_errors(f"switching to tab {index}"):
                    await page.bring_to_front()
                session.active = page
                return await describe_page(session, page)
            elif action == "close":
                with playwright_errors("closing the tab"):
                    page = session.tab(index) if index is not None else await session.page()
                    closed = session.index_of(page)
                    await page.close()
                return f"Closed tab {closed}.\n{await _list_tabs(session)}"
            else:
                assert_never(action)

    @server.tool(annotations=RUNS_SCRIPTS)
    async def evaluate(js: str, ctx: Context) -> str:
        """Run JavaScript in the active tab and return its result as JSON (at most 20 KB).

        `js` is an expression (`document.title`) or a function (`() => [...document.links].length`),
        which is called; a returned Promise is awaited.
        """
        async with active_tab(ctx) as (_, page):
            return await run_script(page, js, timeout)

    return server


def _matching_option(options: list[dict[str, str]], wanted: str) -> str | None:
    """The value of the option whose value or label is `wanted` (exactly, else ignoring case and spaces)."""
    for option in options:
        if wanted in (option["value"], option["label"]):
            return option["value"]
    folded = wanted.strip().casefold()
    for option in options:
        if folded in (option["value"].strip().casefold(), option["label"].strip().casefold()):
            return option["value"]
    return None


async def _list_tabs(session: BrowserSession) -> str:
    """One line per tab: `* 0: Title - URL`, the star on the active tab."""
    tabs = session.tabs
    active = session.active if session.active in tabs else (tabs[-1] if tabs else None)
    lines: list[str] = []
    for number, page in enumerate(tabs):
        title = "(not responding)"
        with anyio.move_on_after(TAB_TITLE_SECONDS), contextlib.suppress(PlaywrightError):
            title = await page.title() or "(no title)"
        marker = "*" if page is active else " "
        lines.append(f"{marker} {number}: {title} - {page.url}")
    if not lines:
        return "No tabs are open; navigate or tabs with action 'new' opens one."
    return "Open tabs (* is active):\n" + "\n".join(lines)
