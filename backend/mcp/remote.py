"""A remote MCP server's connection (Streamable HTTP or SSE) for `mcp.Client`, with what the pool must see.

The SDK's transports do the protocol; this module watches the HTTP underneath them, through an
httpx transport of ours, for what the pool has to act on:

- a request that never reached the server (connection refused) or an MCP session the server no
  longer knows (HTTP 404 on `Mcp-Session-Id`): the call cannot have run, so it may be retried once
  on a new connection; `CallAttempt` tells the caller, through a context variable that the SDK
  carries from the calling task to the task that sends its POST;
- a dropped connection (a stream cut mid-answer, the server restarted): `lost` is set, as a dead
  process sets it for a stdio server, so the runner reconnects;
- the last HTTP error, for the status page;
- a server that wants an OAuth sign-in (backend/mcp/oauth_client.py): `sign_in_needed` says why,
  and a connected one is dropped, so that the runner reports "needs sign-in" instead of failing
  every call with a 401.
- a request refused for want of scope (403 `insufficient_scope`, SEP-835): it fails with a
  message that names the scope and how to sign in again (backend/mcp/oauth_step_up.py); the
  connection stays up for the server's other tools.
- a request refused with a plain 403: it fails with what the server said and whether signing in
  again could help (backend/mcp/oauth_refusal.py), and so does a connect it stops.

It also keeps one failed request from taking the whole SDK transport down: once connected, a
connection error becomes a synthetic 503 for that one message, and a cut stream a `StreamError`,
the two shapes the SDK turns into an error for the one request.
"""

from __future__ import annotations

import logging
import shlex
import socket
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import MCP_SESSION_ID, streamable_http_client

from backend.mcp.config import McpServerConfig
from backend.mcp.lines import MAX_LINE_CHARS
from backend.mcp.oauth_client import PoolAuth, sign_in_hint
from backend.mcp.oauth_refusal import forbidden
from backend.mcp.oauth_step_up import challenged_scope, step_up_refusal
from backend.mcp.oauth_store import OAuthVault
from backend.mcp.transport import StdioProcessTransport
from backend.sandbox.launcher import detect
from backend.sandbox.servers import server_argv

logger = logging.getLogger(__name__)

RemoteKind = Literal["http", "sse"]

CONNECT_TIMEOUT = 10.0
"""Seconds to open a TCP (and TLS) connection to a remote server."""
_DELETE_TIMEOUT = 3.0
"""Seconds the goodbye (DELETE of the MCP session) may take when disconnecting."""
_UNREACHABLE = 503
RECONNECT_BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds before trying a remote server again after the 1st, 2nd, ... failed connect in a row."""


def reconnect_delay(failures: int) -> float:
    """How long to wait after `failures` failed connects in a row (then every 30 s)."""
    return RECONNECT_BACKOFF[min(failures, len(RECONNECT_BACKOFF)) - 1]


@dataclass(kw_only=True)
class CallAttempt:
    """What the HTTP layer saw of one call's requests: whether the server cannot have run it."""

    unreachable: str | None = None
    """Why a request never reached the server (connection refused, DNS), if one did not."""
    session_expired: bool = False
    """The server answered 404 to the MCP session id: it did not take the request."""
    refused: bool = False
    """The server answered 401: it did not take the request (a sign-in is needed)."""
    sent: bool = False
    """Whether any of the call's requests went out (none does once the connection is lost)."""

    def cannot_have_run(self, remote: RemoteTransport) -> bool:
        """True when the server never took the call, so running it again is safe."""
        if self.unreachable is not None or self.session_expired or self.refused:
            return True
        # Nothing is sent on a lost connection, so a call that sent nothing by then never will.
        return not self.sent and remote.lost.is_set()


current_attempt: ContextVar[CallAttempt | None] = ContextVar("overseer_mcp_call_attempt", default=None)


class ConnectionDropped(httpx2.StreamError):
    """A response stream was cut: a StreamError, which the SDK turns into an error for that request."""


def display_url(url: str) -> str:
    """The URL without credentials, query or fragment, to show in statuses, logs and errors."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class RemoteTransport:
    """One connection to a remote MCP server; enter it once (through `mcp.Client`).

    `lost` is set when the connection is gone (dropped, the session expired, the server went
    away), `cause` says why. `pid` and `returncode` are None: there is no process of ours.
    """

    pid: int | None = None
    returncode: int | None = None

    def __init__(
        self,
        *,
        kind: RemoteKind,
        url: str,
        headers: dict[str, str],
        errlog: IO[bytes] | None = None,
        auth: httpx2.Auth | None = None,
        http_transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.kind = kind
        self.url = url
        self.shown_url = display_url(url)
        self.headers = headers
        self.auth = auth
        self.errlog = errlog
        self.lost = anyio.Event()
        self.cause: str | None = None
        self.last_http_error: str | None = None
        self.http_status: int | None = None
        """The status of the last HTTP error, e.g. 401 for a server that wants a sign-in."""
        self.unreachable: str | None = None
        """Why the last request never reached the server ("name not found", "connection refused"), if it did not."""
        self.connected = False
        """Set by the runner once the handshake is done; before it a failure ends the connect."""
        self.sign_in_needed: str | None = None
        """Why the server wants an OAuth sign-in, once it refused every token we have (see PoolAuth)."""
        self.sign_in_hint = ""
        """How to sign in, said with `sign_in_needed`."""
        self._inner = http_transport or httpx2.AsyncHTTPTransport()
        self._cm: AbstractAsyncContextManager[TransportStreams] | None = None
        self._closing = False

    async def __aenter__(self) -> TransportStreams:
        if self._cm is not None:
            raise RuntimeError("a RemoteTransport can be entered only once")
        self._cm = self._open()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._cm is not None
        self._closing = True
        return await self._cm.__aexit__(exc_type, exc, tb)

    def _client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        # No read timeout: event streams stay open for as long as the server likes; each call's
        # own limit (and the start timeout) bound every wait instead.
        return httpx2.AsyncClient(
            headers=self.headers,
            auth=self.auth,
            timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=None),
            transport=_WatchingTransport(self, self._inner),
        )

    def _open(self) -> AbstractAsyncContextManager[TransportStreams]:
        if self.kind == "sse":
            return sse_client(self.url, httpx_client_factory=self._client, sse_read_timeout=None)  # type: ignore[arg-type]
        return _streamable(self)

    def kill(self) -> None:
        """Give up on this connection (the server stopped answering); the runner reconnects."""
        self.drop("stopped answering")

    def drop(self, cause: str) -> None:
        """Mark the connection gone for `cause`; the first cause is the one kept."""
        if self.lost.is_set() or self._closing:
            return
        self.cause = cause
        logger.info("MCP server at %s: %s", self.shown_url, cause)
        self._log(cause)
        self.lost.set()

    def needs_sign_in(self, reason: str) -> None:
        """The server refused every token we have: a person must sign in (no use calling it meanwhile)."""
        self.sign_in_needed = reason
        if self.connected:
            self.drop(f"needs a sign-in ({reason})")

    def note_http_error(self, message: str, status: int | None) -> None:
        """Remember the last HTTP error for the status page, and write it to the server's log."""
        self.last_http_error = message
        self.http_status = status
        self._log(message)

    def _log(self, line: str) -> None:
        if self.errlog is not None:
            stamp = datetime.now().isoformat(timespec="seconds")
            try:
                self.errlog.write(f"{stamp} {line}\n".encode())
            except (OSError, ValueError):  # a closed log must not fail a request
                pass

    def start_failure(self, exc: Exception) -> str:
        """Why connecting failed, from what ended it and what the HTTP layer saw."""
        if self.sign_in_needed is not None:
            return f"needs a sign-in at {self.shown_url} ({self.sign_in_needed}); {self.sign_in_hint}"
        if self.last_http_error is not None:
            return f"could not connect to {self.shown_url}: {self.last_http_error}"
        leaves = _leaf_exceptions(exc)
        return f"could not connect to {self.shown_url}: {leaves[0]!r}"


def open_transport(
    config: McpServerConfig, log: IO[bytes], *, name: str = "", oauth: OAuthVault | None = None
) -> StdioProcessTransport | RemoteTransport:
    """A server's transport for one start: a process of its own, or a remote connection.

    A remote server `name` without an Authorization header is signed in with its tokens in
    `oauth`, if given. Raises ValueError when a header names an environment variable that is not
    set (any more).
    """
    stamp = datetime.now().isoformat(timespec="seconds")
    if config.type != "stdio":
        assert config.url is not None
        log.write(f"--- {stamp} connecting ({config.type}): {display_url(config.url)}\n".encode())
        remote = RemoteTransport(kind=config.type, url=config.url, headers=config.resolved_headers(), errlog=log)
        if oauth is not None and config.signs_in_with_oauth:
            remote.auth = PoolAuth(name, config, oauth, on_sign_in_needed=remote.needs_sign_in)
            remote.sign_in_hint = sign_in_hint(name)
        return remote
    command, args = config.command, config.args
    if config.sandbox is not None:  # raises SandboxUnavailable: a server that asked for one never runs without
        home = Path(log.name).parent.parent / "server-homes" / (name or "server")
        command, *args = server_argv(detect("auto"), config.sandbox, config.command, config.args, home=home)
    log.write(f"--- {stamp} starting: {shlex.join([config.command, *config.args])}\n".encode())
    return StdioProcessTransport(command=command, args=args, env=config.process_env(), cwd=config.cwd, errlog=log)


@asynccontextmanager
async def _streamable(remote: RemoteTransport) -> AsyncIterator[TransportStreams]:
    # An SSE event is capped as a stdio line is; a JSON answer by _WatchedStream.
    async with remote._client() as client, streamable_http_client(
        remote.url, http_client=client, max_sse_event_size=MAX_LINE_CHARS
    ) as streams:
        yield streams


class _WatchingTransport(httpx2.AsyncBaseTransport):
    """Sends through `inner`, telling the RemoteTransport (and the calling attempt) what happened."""

    def __init__(self, remote: RemoteTransport, inner: httpx2.AsyncBaseTransport) -> None:
        self.remote = remote
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        remote, attempt = self.remote, current_attempt.get()
        if remote.lost.is_set():
            # The runner is replacing this connection: nothing more goes out on it (a retry
            # decision relies on that), and the goodbye to a server that is gone is moot.
            return httpx2.Response(_UNREACHABLE, request=request, content=b"connection lost")
        if attempt is not None:
            attempt.sent = True
        try:
            if request.method == "DELETE":
                with anyio.fail_after(_DELETE_TIMEOUT):
                    response = await self.inner.handle_async_request(request)
            else:
                response = await self.inner.handle_async_request(request)
        except (httpx2.TransportError, TimeoutError) as exc:
            never_sent = isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.PoolTimeout)
            reason = f"cannot reach the server ({_describe(exc)})" if never_sent else f"the connection failed ({_describe(exc)})"
            remote.note_http_error(f"{request.method}: {reason}", None)
            if never_sent:
                remote.unreachable = unreachable_reason(exc)
            if not remote.connected:
                raise  # connecting: the start fails with this reason
            if attempt is not None and never_sent:
                attempt.unreachable = reason
            remote.drop(reason)
            # One message's failure, not the transport's: the SDK fails just this request.
            return httpx2.Response(_UNREACHABLE, request=request, content=reason.encode())
        status = response.status_code
        remote.unreachable = None  # it answered
        listening = request.method == "GET" and remote.kind == "http"  # the optional stream of server messages
        if (status >= 400 and request.method == "DELETE") or (status == 403 and listening):
            # The goodbye, or a stream the SDK does without: refused, it says nothing of the calls.
            remote._log(f"HTTP {status} on {request.method}")
            return response
        if status >= 400:
            if status == 403 and challenged_scope(response) is None:
                # A plain refusal: said as it is, with whether signing in again could help.
                hint = remote.auth.hint if isinstance(remote.auth, PoolAuth) else None
                refused, message = await forbidden(request, response, sign_in_hint=hint)
                remote.note_http_error(message, status)
                return refused
            remote.note_http_error(f"HTTP {status} on {request.method}", status)
            if isinstance(remote.auth, PoolAuth) and (challenged := challenged_scope(response)) is not None:
                # A step-up challenge (SEP-835): the caller reads which scope is missing and how to get it.
                message = await remote.auth.step_up(challenged)
                await response.aclose()
                return step_up_refusal(request, response, message)
            if status == 401 and attempt is not None:
                attempt.refused = True
            if status == 404 and MCP_SESSION_ID in request.headers:
                if attempt is not None:
                    attempt.session_expired = True
                remote.drop("the server no longer knows our MCP session (HTTP 404); starting a new one")
            return response
        return httpx2.Response(
            status,
            headers=response.headers,
            stream=_WatchedStream(
                response.stream,
                remote,
                ends_connection=self._is_sse_channel(request),
                limit=MAX_LINE_CHARS if _is_json(response) else None,
            ),
            extensions=response.extensions,
            request=request,
        )

    def _is_sse_channel(self, request: httpx2.Request) -> bool:
        # The old SSE transport's GET stream is the connection itself: when it ends, so does it.
        return self.remote.kind == "sse" and request.method == "GET"

    async def aclose(self) -> None:
        await self.inner.aclose()


class _WatchedStream(httpx2.AsyncByteStream):
    """A response body: a cut connection drops the RemoteTransport; a JSON body is size-capped."""

    def __init__(self, inner: Any, remote: RemoteTransport, *, ends_connection: bool, limit: int | None) -> None:
        self.inner = inner
        self.remote = remote
        self.ends_connection = ends_connection
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        try:
            async for chunk in self.inner:
                size += len(chunk)
                if self.limit is not None and size > self.limit:
                    raise _TooLarge(
                        f"the server's answer was more than the {self.limit:,} bytes the host reads; "
                        "ask for less (a narrower path or pattern, a smaller page)"
                    )
                yield chunk
        except httpx2.TransportError as exc:
            reason = f"the connection dropped ({_describe(exc)})"
            self.remote.note_http_error(reason, None)
            self.remote.drop(reason)
            raise ConnectionDropped(reason) from exc
        if self.ends_connection:
            self.remote.drop("the server closed its event stream")

    async def aclose(self) -> None:
        await self.inner.aclose()


class _TooLarge(httpx2.StreamError):
    """A JSON answer over the cap; the SDK reports it to the one request as a parse error."""


def _is_json(response: httpx2.Response) -> bool:
    return response.headers.get("content-type", "").lower().startswith("application/json")


def unreachable_reason(exc: BaseException) -> str:
    """Why a request never reached the server, in a few words: "name not found", "connection refused"."""
    if isinstance(exc, httpx2.ConnectTimeout | httpx2.PoolTimeout | TimeoutError):
        return "timed out"
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return "name not found"
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    if any(s in text for s in ("Name or service not known", "nodename nor servname", "name resolution", "No address associated")):
        return "name not found"
    if "refused" in text.lower():
        return "connection refused"
    return _describe(exc)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaf_exceptions(inner)]
    return [exc]
