"""Signing in to a remote MCP server: OAuth's authorization code flow, with a person in a browser.

The `mcp` SDK's `OAuthClientProvider` runs the protocol on probe requests to the server (the
handshake, then a listing: see `_probe`): the 401 and its `WWW-Authenticate`, protected-resource
metadata (RFC 9728), the authorization server's metadata (RFC 8414), dynamic registration (RFC
7591) unless the config names a client, the authorization URL with PKCE and the resource
indicator (RFC 8707), the state check and the code exchange. Where the config names a client
metadata document (`oauth.client_metadata_url`) and the authorization server takes such
documents, its URL is the client id instead of a registration (backend/mcp/oauth_cimd.py).
Overseer supplies where the URL goes and where the answer comes from: the dashboard (`SignIns`,
answered by `GET /oauth/callback`) or the terminal (`login_in_terminal`, answered on a loopback
port). Tokens land in the vault, where the pool's connection finds them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_client import (
    CLIENT_NAME,
    OverseerOAuthProvider,
    ServerOAuthStorage,
    client_metadata,
    client_metadata_url,
    sign_in_hint,
)
from backend.mcp.oauth_refusal import Credentials, refusal_message, request_method, what_it_said
from backend.mcp.oauth_step_up import challenged_scope
from backend.mcp.oauth_store import OAuthVault

logger = logging.getLogger(__name__)

CALLBACK_PATH = "/oauth/callback"
SIGN_IN_TIMEOUT = 600.0
"""Seconds a person has to finish signing in once the authorization URL is out."""
STEP_TIMEOUT = 60.0
"""Seconds for the machine's part: discovery and registration until the URL, the code exchange after."""
_HTTP_TIMEOUT = httpx2.Timeout(10.0, read=30.0)
_CLIENT_INFO = {"name": CLIENT_NAME.lower(), "version": "sign-in"}

ShowUrl = Callable[[str], Awaitable[None]]
AwaitAnswer = Callable[[], Awaitable[AuthorizationCodeResult]]


class SignInFailed(Exception):
    """A sign-in did not complete; the message says why (never a token or a secret)."""


class AuthorizationResponse(BaseModel):
    """What the authorization server sends the browser back with (RFC 6749 4.1.2, RFC 9207 `iss`)."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None

    def result(self) -> AuthorizationCodeResult:
        """The code for the SDK, or SignInFailed with the server's refusal."""
        if self.error is not None or not self.code:
            said = self.error or "no code"
            more = f": {self.error_description}" if self.error_description else ""
            raise SignInFailed(f"the authorization server refused the sign-in ({said}{more})")
        return AuthorizationCodeResult(code=self.code, state=self.state, iss=self.iss)


def state_of(authorization_url: str) -> str:
    """The `state` the SDK put in an authorization URL: what the callback must bring back."""
    return parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]


class _NewSignIn(ServerOAuthStorage):
    """The vault as a new sign-in sees it: no tokens (the person asked to sign in), and a stored
    registration only if it lists this sign-in's redirect URI (the dashboard's and the terminal's
    differ; the authorization server checks it against the registration).

    With `oauth.client_metadata_url`, a registration made without it is set aside too: the flow
    then sends the URL where the authorization server takes it, and registers anew where not.
    """

    def __init__(self, vault: OAuthVault, name: str, config: McpServerConfig, redirect_uri: str) -> None:
        super().__init__(vault, name, config)
        self.redirect_uri = redirect_uri
        self.metadata_url = client_metadata_url(config)
        self.signed_in = False

    async def get_tokens(self) -> OAuthToken | None:
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await super().set_tokens(tokens)
        self.signed_in = True

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.configured is not None:
            return self.configured
        stored = await self.stored.get_client_info()
        if stored is None or self.redirect_uri not in {str(uri) for uri in stored.redirect_uris or []}:
            return None
        if self.metadata_url is not None and stored.client_id != self.metadata_url:
            return None
        return stored


async def sign_in(
    name: str,
    config: McpServerConfig,
    vault: OAuthVault,
    *,
    redirect_uri: str,
    show_url: ShowUrl,
    answer: AwaitAnswer,
) -> None:
    """Sign in to server `name`: `show_url(url)` sends the person there, `answer()` brings back the code.

    Unbounded while the person decides: the caller bounds it. Raises SignInFailed.
    """
    assert config.url is not None
    storage = _NewSignIn(vault, name, config, redirect_uri)
    provider = OverseerOAuthProvider(
        server_url=config.url,
        client_metadata=client_metadata(config, redirect_uri),
        storage=storage,
        redirect_handler=show_url,
        callback_handler=answer,
        configured=storage.configured,
        metadata_url=storage.metadata_url,
    )
    stored = vault.read(name)  # a small local file, as the pool's _restore reads it
    provider.extra_scope = stored.step_up_scope
    try:
        headers = config.resolved_headers()
        async with httpx2.AsyncClient(headers=headers, auth=provider, timeout=_HTTP_TIMEOUT) as client:
            answer = await _probe(client, config, provider)
    except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError) as exc:
        raise SignInFailed(str(exc)) from None
    except httpx2.HTTPError as exc:
        raise SignInFailed(f"cannot reach {config.url} or its authorization server ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:  # a header's ${VAR} is unset
        raise SignInFailed(str(exc)) from None
    status = answer.status_code
    if status == 403 and challenged_scope(answer) is None:  # a plain 403: what it said, and what would help
        said, _ = what_it_said(answer, answer.content)
        credentials: Credentials = "token" if storage.signed_in else "none"
        message = refusal_message(request_method(answer.request)[1], said, credentials=credentials, hint=sign_in_hint(name))
        raise SignInFailed(message)
    if not storage.signed_in:
        raise SignInFailed(f"the server answered without asking for a sign-in (HTTP {status})")
    if status in (401, 403):
        raise SignInFailed(f"the server still refuses the new sign-in (HTTP {status})")
    # Kept for the pool's refreshes after a restart (see backend/mcp/oauth_client.py).
    await storage.stored.set_discovery(provider.context.oauth_metadata, provider.context.protected_resource_metadata)
    await _settle_step_up(vault, name, provider)
    logger.info("signed in to MCP server %r", name)


async def _settle_step_up(vault: OAuthVault, name: str, provider: OverseerOAuthProvider) -> None:
    """Note what this sign-in asked for; a step-up it was granted is done (backend/mcp/oauth_step_up.py)."""
    requested = provider.context.client_metadata.scope
    tokens = provider.context.current_tokens
    granted = set(((tokens.scope if tokens is not None else None) or requested or "").split())
    wanted = provider.extra_scope
    done = wanted is None or set(wanted.split()) <= granted
    changes: dict[str, str | None] = {"requested_scope": requested} | ({"step_up_scope": None} if done else {})

    def update() -> None:
        vault.write(name, vault.read(name).model_copy(update=changes))

    await anyio.to_thread.run_sync(update)
    if not done:
        # The pool's next refusal says so to the caller (it finds `requested_scope` covers it).
        logger.warning("signed in to MCP server %r without all the scope it asked for (%s)", name, wanted)


async def _probe(client: httpx2.AsyncClient, config: McpServerConfig, provider: OAuthClientProvider) -> httpx2.Response:
    """Requests that need the sign-in; the answer to the last, once signed in (read: a refusal is quoted).

    Over Streamable HTTP that is `initialize` and then a listing: a server may let `initialize`
    through without a token and ask only for what follows, and a probe that stopped at the
    handshake would find nothing to sign in to while the pool is refused every listing. A server
    that refuses `initialize` (2026-07-28 only) is asked for a listing in that era's envelope.
    """
    assert config.url is not None
    if config.type == "sse":
        async with client.stream("GET", config.url, headers={"Accept": "text/event-stream"}) as response:
            if response.status_code >= 400:
                await response.aread()
            return response
    version = HANDSHAKE_PROTOCOL_VERSIONS[-1]
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": _CLIENT_INFO}
    response = await _post(client, config.url, _request(1, "initialize", params), {})
    if response.status_code in (401, 403):
        return response
    if response.status_code >= 400:
        # No handshake here: a server of the 2026-07-28 era takes each request on its own.
        return await _modern_listing(client, config.url)
    session = response.headers.get("mcp-session-id")
    answer = _first_message(response)
    version = str(answer.get("result", {}).get("protocolVersion") or version)
    headers = {"mcp-protocol-version": version} | ({"mcp-session-id": session} if session else {})
    await _post(client, config.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    listed = await _post(client, config.url, _request(2, "tools/list", {}), headers)
    tokens = provider.context.current_tokens
    if session and tokens is not None:
        # End the MCP session the probe opened, with the token just issued and outside the auth
        # flow: a token due at once (expires_in 0) must not start a second sign-in for a goodbye.
        bearer = {"Authorization": f"Bearer {tokens.access_token}", "mcp-session-id": session}
        try:
            await client.delete(config.url, headers=bearer, auth=None)
        except httpx2.HTTPError:
            pass  # a server that will not end it lets it expire
    return listed


async def _modern_listing(client: httpx2.AsyncClient, url: str) -> httpx2.Response:
    """A listing in the 2026-07-28 envelope: who is asking rides in every request's `_meta`."""
    version = MODERN_PROTOCOL_VERSIONS[-1]
    meta = {
        mcp_types.PROTOCOL_VERSION_META_KEY: version,
        mcp_types.CLIENT_INFO_META_KEY: _CLIENT_INFO,
        mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    headers = {"mcp-protocol-version": version, "mcp-method": "tools/list"}
    return await _post(client, url, _request(2, "tools/list", {"_meta": meta}), headers)


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    message = mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _post(client: httpx2.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    """One probe message, its answer read whole (the probe's answers are small: a handshake, a listing)."""
    accept = {"Accept": "application/json, text/event-stream"}
    async with client.stream("POST", url, json=body, headers=accept | headers) as response:
        await response.aread()
    return response


def _first_message(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message in a JSON or event-stream answer ({} when there is none to read)."""
    text = response.text
    if "text/event-stream" in response.headers.get("content-type", ""):
        text = next((line[5:] for line in text.splitlines() if line.startswith("data:")), "")
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


@dataclass(kw_only=True)
class _Pending:
    """A dashboard sign-in waiting for the browser to come back."""

    server: str
    state: str = ""
    answer: asyncio.Future[AuthorizationCodeResult]
    task: asyncio.Task[None] | None = None


class UnknownSignIn(SignInFailed):
    """A callback whose `state` matches no sign-in waiting here (finished, timed out, replaced)."""


class SignIns:
    """Sign-ins begun from the dashboard, each waiting for `GET /oauth/callback` (found by `state`).

    `on_signed_in(name)` runs once a sign-in stored its tokens: the pool reconnects the server.
    """

    def __init__(self, vault: OAuthVault, *, on_signed_in: Callable[[str], Awaitable[None]]) -> None:
        self.vault = vault
        self.on_signed_in = on_signed_in
        self._by_state: dict[str, _Pending] = {}
        self._by_server: dict[str, _Pending] = {}

    def pending(self, name: str) -> bool:
        """Whether a sign-in to `name` is waiting for its callback."""
        return name in self._by_server

    async def begin(self, name: str, config: McpServerConfig, *, redirect_uri: str) -> str:
        """Start signing in to `name`; the authorization URL to open. A newer sign-in replaces an older one."""
        self._cancel(name)
        loop = asyncio.get_running_loop()
        url: asyncio.Future[str] = loop.create_future()
        pending = _Pending(server=name, answer=loop.create_future())

        async def show(authorization_url: str) -> None:
            if url.done():
                raise SignInFailed("the server asked for a second sign-in within this one")
            pending.state = state_of(authorization_url)
            self._by_state[pending.state] = pending
            url.set_result(authorization_url)

        async def run() -> None:
            try:
                with anyio.fail_after(SIGN_IN_TIMEOUT):
                    await sign_in(
                        name, config, self.vault, redirect_uri=redirect_uri, show_url=show, answer=lambda: pending.answer
                    )
            finally:
                self._by_state.pop(pending.state, None)
                if self._by_server.get(name) is pending:
                    del self._by_server[name]

        pending.task = asyncio.create_task(run(), name=f"oauth-sign-in:{name}")
        pending.task.add_done_callback(_note_end)
        self._by_server[name] = pending
        await asyncio.wait({url, pending.task}, timeout=STEP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if url.done():
            return url.result()
        if not pending.task.done():
            pending.task.cancel()
            raise SignInFailed(f"no authorization URL within {STEP_TIMEOUT:g} s")
        raise _failure(pending.task)

    async def finish(self, response: AuthorizationResponse) -> str:
        """Complete the sign-in the browser came back from; the server's name. Raises SignInFailed."""
        pending = self._by_state.pop(response.state or "", None)
        if pending is None or pending.task is None:
            raise UnknownSignIn("no sign-in is waiting for this answer: it finished, timed out or was started again")
        try:
            pending.answer.set_result(response.result())
        except SignInFailed as exc:
            pending.answer.set_exception(exc)
        # asyncio.wait never cancels what it waits for: a browser that goes away does not abandon the exchange.
        done, _ = await asyncio.wait({pending.task}, timeout=STEP_TIMEOUT)
        if not done:
            pending.task.cancel()
            raise SignInFailed(f"the sign-in did not complete within {STEP_TIMEOUT:g} s of the answer")
        if pending.task.cancelled() or pending.task.exception() is not None:
            raise _failure(pending.task)
        await self.on_signed_in(pending.server)
        return pending.server

    def _cancel(self, name: str) -> None:
        old = self._by_server.pop(name, None)
        if old is not None and old.task is not None:
            old.task.cancel()

    async def start(self) -> None:
        """Nothing to start (a host service)."""

    async def aclose(self) -> None:
        """Abandon every sign-in still waiting."""
        tasks = [p.task for p in self._by_server.values() if p.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=STEP_TIMEOUT)


def _note_end(task: asyncio.Task[None]) -> None:
    """Log how a sign-in nobody waits for any more ended (and mark its exception as seen)."""
    if not task.cancelled() and task.exception() is not None:
        logger.info("%s ended: %s", task.get_name(), _failure(task))


def _failure(task: asyncio.Task[None]) -> SignInFailed:
    if task.cancelled():
        return SignInFailed("the sign-in was abandoned (started again, or Overseer is stopping)")
    exc = task.exception()
    if exc is None:
        return SignInFailed("the sign-in ended before it began")
    if isinstance(exc, SignInFailed):
        return exc
    if isinstance(exc, TimeoutError):
        return SignInFailed(f"nobody finished signing in within {SIGN_IN_TIMEOUT:g} s")
    logger.error("signing in failed unexpectedly", exc_info=exc)
    return SignInFailed(f"the sign-in failed unexpectedly ({type(exc).__name__})")
