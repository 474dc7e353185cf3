"""Running the model's JavaScript in a page: bounded in time, its result as bounded JSON."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from mcp_servers.browser.errors import is_closed_target, message_of

RESULT_MAX_CHARS = 20_000
"""The most JSON one `evaluate` call returns."""

PROBE_SECONDS = 2.0
"""How long a page that outlived a script's time limit gets to show it is still responsive."""


async def run_script(page: Page, js: str, timeout: float) -> str:
    """Evaluate `js` in `page` and return its result as JSON, at most `RESULT_MAX_CHARS` long.

    A script still running after `timeout` seconds is abandoned; if it left the page frozen
    (an endless loop), the tab is closed so the session's other calls do not hang on it.
    """
    try:
        with anyio.fail_after(timeout):
            value = await page.evaluate(js)
    except TimeoutError as exc:
        closed = await _close_if_frozen(page)
        outcome = "it froze the page, so the tab was closed" if closed else "the page is still usable"
        raise ToolError(f"the script did not finish within {timeout:g} s; {outcome}.") from exc
    except PlaywrightError as exc:
        if is_closed_target(exc):
            raise ToolError("the tab was closed while the script ran. Call tabs with action 'list'.") from exc
        raise ToolError(f"the script failed: {message_of(exc)}") from exc
    return to_json(value)


def to_json(value: Any, limit: int = RESULT_MAX_CHARS) -> str:
    """`value` as JSON (anything JSON cannot hold is written as a string), cut to `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[result cut at {limit} characters; {len(text) - limit} more not shown]"


async def _close_if_frozen(page: Page) -> bool:
    with anyio.move_on_after(PROBE_SECONDS):
        with contextlib.suppress(PlaywrightError):
            await page.evaluate("1")
        return False
    with anyio.move_on_after(PROBE_SECONDS), contextlib.suppress(PlaywrightError):
        await page.close(run_before_unload=False)
    return True
