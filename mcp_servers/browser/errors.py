"""Turning Playwright failures into errors the model can read and act on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

_NET_ERROR = re.compile(r"net::ERR_[A-Z0-9_]+")
# Playwright prefixes messages with the API that failed ("Page.goto: ..."); the model never called it.
_API_PREFIX = re.compile(r"^[A-Za-z]+\.[A-Za-z_]+: ")

_NET_ADVICE = {
    "net::ERR_NAME_NOT_RESOLVED": "the host name does not resolve: check the URL's spelling",
    "net::ERR_CONNECTION_REFUSED": "nothing accepts connections there: check the URL and port, "
    "or whether the site is up",
    "net::ERR_CONNECTION_TIMED_OUT": "the site did not answer: try again later or try another URL",
    "net::ERR_INTERNET_DISCONNECTED": "this machine is offline",
    "net::ERR_ABORTED": "the navigation was cancelled (the URL may be a download, which is not supported)",
    "net::ERR_UNSAFE_PORT": "Chromium refuses this port: use another one",
}
_CERT_ADVICE = "the site's TLS certificate is not valid: do not trust this site, or use its http:// URL"


def message_of(exc: PlaywrightError) -> str:
    """The first line of a Playwright error, without the name of the internal API call."""
    first = exc.message.strip().split("\n", 1)[0]
    return _API_PREFIX.sub("", first)


def is_closed_target(exc: PlaywrightError) -> bool:
    """Whether `exc` says the page, context or browser it acted on has been closed."""
    return "has been closed" in exc.message or type(exc).__name__ == "TargetClosedError"


def navigation_error(url: str, exc: PlaywrightError, timeout: float) -> ToolError:
    """A `ToolError` naming the URL, the cause (e.g. `net::ERR_CONNECTION_REFUSED`) and what to try."""
    if isinstance(exc, PlaywrightTimeoutError):
        return ToolError(
            f"{url} did not finish loading within {timeout:g} s (timeout). The site may be slow or not "
            "answering: call snapshot to see what did load, try again, or try another URL."
        )
    match = _NET_ERROR.search(exc.message)
    if match is not None:
        code = match.group()
        advice = _CERT_ADVICE if "CERT" in code else _NET_ADVICE.get(code, "check the URL or try another")
        return ToolError(f"cannot load {url}: {code}; {advice}.")
    return ToolError(f"cannot load {url}: {message_of(exc)}")


@contextmanager
def playwright_errors(action: str) -> Iterator[None]:
    """Re-raise a Playwright error in the block as a `ToolError` saying what `action` hit.

    Without this the model would read a stack trace of Playwright internals, or nothing.
    """
    try:
        yield
    except PlaywrightTimeoutError as exc:
        raise ToolError(
            f"{action} timed out: {message_of(exc).rstrip('.')}. The element may be disabled or covered: "
            "take a new snapshot and check it."
        ) from exc
    except PlaywrightError as exc:
        if is_closed_target(exc):
            raise ToolError(f"{action} failed: the tab was closed. Call tabs with action 'list'.") from exc
        raise ToolError(f"{action} failed: {message_of(exc)}") from exc
