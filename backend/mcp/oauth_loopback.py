"""`overseer mcp login NAME`: sign in from a terminal, the browser coming back to a loopback port.

As native apps do (RFC 8252, 7.3): Overseer listens on 127.0.0.1 (`oauth.callback_port`, else
any free port, which dynamic registration then names), prints the authorization URL, and takes
the one answer whose `state` is the URL's. The tokens go to the vault in the data dir, where the
pool of a running `overseer serve` reads them when it next connects the server.
"""

from __future__ import annotations

import asyncio
import html
import socket
from collections.abc import Callable
from functools import partial
from types import TracebackType

import anyio
import uvicorn
from mcp.shared.auth import AuthorizationCodeResult
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import (
    CALLBACK_PATH,
    SIGN_IN_TIMEOUT,
    STEP_TIMEOUT,
    AuthorizationResponse,
    SignInFailed,
    sign_in,
    state_of,
)
from backend.mcp.oauth_store import OAuthVault

PAGE_HEADERS = {
    # The page shows one line of text: no scripts, no framing, no caching of the code in its URL.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


def result_page(title: str, message: str, status: int = 200) -> HTMLResponse:
    """The page the browser shows after coming back from the authorization server."""
    document = (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<h1 data-testid='sign-in-result'>{html.escape(title)}</h1><p>{html.escape(message)}</p>"
    )
    return HTMLResponse(document, status_code=status, headers=PAGE_HEADERS)


class LoopbackCallback:
    """A listener on 127.0.0.1 for the one redirect a terminal sign-in waits for."""

    def __init__(self, port: int = 0) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind(("127.0.0.1", port))
        except OSError as exc:
            self._sock.close()
            raise SignInFailed(f"cannot listen on 127.0.0.1:{port} for the sign-in's answer ({exc.strerror})") from None
        self._sock.listen(16)  # listening now: a browser that comes back early waits in the backlog
        self.port = int(self._sock.getsockname()[1])
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        self._state: str | None = None
        self._answer: asyncio.Future[AuthorizationCodeResult] | None = None
        self._outcome: asyncio.Future[str | None] | None = None
        app = Starlette(routes=[Route(CALLBACK_PATH, self._callback, methods=["GET"])])
        # No access log: the callback's URL carries the authorization code.
        self._server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopbackCallback:
        loop = asyncio.get_running_loop()
        self._answer, self._outcome = loop.create_future(), loop.create_future()
        self._task = loop.create_task(self._server.serve(sockets=[self._sock]), name="oauth-loopback")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.finished("the sign-in was abandoned" if exc is not None else None)
        self._server.should_exit = True
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=STEP_TIMEOUT)
        self._sock.close()

    def expect(self, authorization_url: str) -> None:
        """Take only the answer that brings back this URL's `state`."""
        self._state = state_of(authorization_url)

    async def answer(self) -> AuthorizationCodeResult:
        """The authorization code, once the browser comes back (SignInFailed if it brings a refusal)."""
        assert self._answer is not None, "enter the LoopbackCallback first"
        return await self._answer

    def finished(self, error: str | None) -> None:
        """Tell the waiting browser how the sign-in ended (None: signed in)."""
        if self._outcome is not None and not self._outcome.done():
            self._outcome.set_result(error)

    async def _callback(self, request: Request) -> HTMLResponse:
        response = AuthorizationResponse.model_validate(dict(request.query_params))
        if self._answer is None or self._outcome is None or self._answer.done() or response.state != self._state:
            return result_page("Not this sign-in", "This terminal is not waiting for this answer.", 400)
        try:
            self._answer.set_result(response.result())
        except SignInFailed as exc:
            self._answer.set_exception(exc)
        done, _ = await asyncio.wait({self._outcome}, timeout=STEP_TIMEOUT)
        error = self._outcome.result() if done else "no answer from the terminal"
        if error is not None:
            return result_page("Sign-in failed", error, 400)
        return result_page("Signed in", "You can close this tab and return to the terminal.")


async def login_in_terminal(
    name: str, config: McpServerConfig, vault: OAuthVault, *, say: Callable[[str], None] | None = None
) -> None:
    """Sign in to server `name`: print the URL, wait (bounded) for the browser on loopback. Raises SignInFailed."""
    say = say or partial(print, flush=True)  # flushed: whoever reads our output needs the URL now
    port = config.oauth.callback_port if config.oauth is not None and config.oauth.callback_port else 0
    async with LoopbackCallback(port) as callback:

        async def show(url: str) -> None:
            callback.expect(url)
            say(f"Open this URL in a browser to sign in to {name!r}:\n\n    {url}\n")
            say(f"Waiting for the answer on {callback.redirect_uri} (up to {SIGN_IN_TIMEOUT / 60:g} minutes) ...")

        try:
            with anyio.fail_after(SIGN_IN_TIMEOUT):
                await sign_in(name, config, vault, redirect_uri=callback.redirect_uri, show_url=show, answer=callback.answer)
        except TimeoutError:
            raise SignInFailed(f"nobody finished signing in within {SIGN_IN_TIMEOUT:g} s") from None
        except SignInFailed as exc:
            callback.finished(str(exc))
            raise
        callback.finished(None)
