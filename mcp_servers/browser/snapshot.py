"""A page's accessible outline with element refs, and finding an element again by its ref."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from mcp_servers.browser.errors import message_of
from mcp_servers.browser.sessions import ACTION_TIMEOUT_SECONDS
from mcp_servers.browser.snapshot_script import SNAPSHOT_SCRIPT

REF_ATTRIBUTE = "data-overseer-ref"
SNAPSHOT_MAX_CHARS = 40_000
"""The most outline text one `snapshot` call returns."""

MAX_NODES = 5_000
"""Elements the in-page walk describes before it stops (bounds the work on huge pages)."""

INLINE_TEXT_MAX = 200
"""A container whose content is only text this short is written on one line."""

_REF = re.compile(r"e\d+")
_ATTEMPTS = 3


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """A rendered outline, and the ref counter after the refs it handed out."""

    text: str
    next_ref: int


async def take_snapshot(page: Page, next_ref: int, *, limit: int = SNAPSHOT_MAX_CHARS) -> Snapshot:
    """The outline of `page`'s main frame, at most `limit` characters, tagging elements with refs.

    A page that is navigating destroys the script's context mid-walk; the walk is then retried
    on the new document, a bounded number of times.
    """
    args = {"attribute": REF_ATTRIBUTE, "nextRef": next_ref, "maxNodes": MAX_NODES, "maxChars": limit * 2}
    for attempt in range(_ATTEMPTS):
        try:
            with anyio.fail_after(ACTION_TIMEOUT_SECONDS):
                result: dict[str, Any] = await page.evaluate(SNAPSHOT_SCRIPT, args)
            break
        except TimeoutError as exc:
            raise ToolError(
                f"the page did not answer within {ACTION_TIMEOUT_SECONDS:g} s (a script may be stuck); "
                "navigate elsewhere or close the tab with tabs"
            ) from exc
        except PlaywrightError as exc:
            if attempt == _ATTEMPTS - 1 or "context was destroyed" not in exc.message:
                raise ToolError(f"cannot read the page: {message_of(exc)}. Call snapshot again.") from exc
            with anyio.move_on_after(ACTION_TIMEOUT_SECONDS):
                await page.wait_for_load_state("domcontentloaded")
    lines = render_tree(result["tree"])
    if result["truncated"]:
        lines.append("[the page is too large: the outline stops here]")
    return Snapshot(text=cut("\n".join(lines), limit), next_ref=result["nextRef"])


def render_tree(tree: list[Any], depth: int = 0) -> list[str]:
    """Indented lines for a tree from the page script: `[ref=e3] textbox "Name" value="bob"`, text as is."""
    pad = "  " * depth
    lines: list[str] = []
    for item in tree:
        if isinstance(item, str):
            lines.extend(pad + line for line in _text_lines(item))
            continue
        head = describe_item(item)
        children: list[Any] = item.get("children") or []
        if children and all(isinstance(child, str) for child in children):
            text = " ".join(_text_lines("".join(children)))
            if len(text) <= INLINE_TEXT_MAX:
                lines.append(f"{pad}{head}: {text}" if text else pad + head)
                continue
        if not children:
            lines.append(pad + head)
            continue
        lines.append(f"{pad}{head}:")
        lines.extend(render_tree(children, depth + 1))
    return lines


def describe_item(item: dict[str, Any]) -> str:
    """One element's line: ref, role, quoted name, then its state (value, checked, level...)."""
    parts: list[str] = []
    if item.get("ref"):
        parts.append(f"[ref={item['ref']}]")
    parts.append(item["role"])
    if item.get("name"):
        parts.append(_quote(item["name"]))
    if item.get("level"):
        parts.append(f"level={item['level']}")
    if "value" in item:
        parts.append(f"value={_quote(item['value'])}")
    if "checked" in item:
        parts.append("checked" if item["checked"] else "unchecked")
    if "expanded" in item:
        parts.append("expanded" if item["expanded"] else "collapsed")
    if item.get("options"):
        more = f" (+{item['moreOptions']} more)" if item.get("moreOptions") else ""
        parts.append(f"options=[{', '.join(_quote(o) for o in item['options'])}]{more}")
    if item.get("disabled"):
        parts.append("disabled")
    if item.get("required"):
        parts.append("required")
    if item.get("href"):
        parts.append(f"-> {item['href']}")
    return " ".join(parts)


def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a line break, saying how much was left out."""
    if len(text) <= limit:
        return text
    kept = text[:limit]
    if "\n" in kept:
        kept = kept[: kept.rindex("\n")]
    return (
        f"{kept}\n[outline cut at {limit} characters; {len(text) - len(kept)} more not shown. "
        "Read a specific part with evaluate, e.g. document.querySelector('main').innerText]"
    )


async def locate(page: Page, ref: str) -> Locator:
    """The visible element tagged `ref` by an earlier snapshot, or a `ToolError` asking for a new one."""
    cleaned = ref.strip().strip("[]").removeprefix("ref=")
    if not _REF.fullmatch(cleaned):
        raise ToolError(
            f"{ref!r} is not an element ref; refs look like e12. Take a snapshot and use one of its refs."
        )
    locator = page.locator(f'[{REF_ATTRIBUTE}="{cleaned}"]')
    if await locator.count() == 0:
        raise ToolError(
            f"no element with ref {cleaned} on the current page (the page changed since that snapshot). "
            "Take a new snapshot and use a ref from it."
        )
    element = locator.first
    # Acting on a hidden element would wait out the whole action timeout before failing.
    if not await element.is_visible():
        raise ToolError(f"the element {cleaned} is hidden now. Take a new snapshot and use a ref from it.")
    return element


def _text_lines(text: str) -> list[str]:
    return [stripped for line in text.split("\n") if (stripped := line.strip())]


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
