"""The egress proxy: the one way out of a sandbox that has no network of its own.

A sandboxed command has only a private loopback (bubblewrap `--unshare-net`). The host runs this
proxy on one Unix socket per session, so it knows who asks; the socket is bind-mounted into the
sandbox, where netbridge.py relays the command's TCP connections to it. A connection speaks HTTP
proxy (CONNECT, or an absolute-URI request forwarded once with `Connection: close`) or SOCKS5 (no
auth, CONNECT only), told apart by its first byte.

A (host, port) on the session's allowlist is connected; any other is put to `decide` (a person,
through the approval broker), concurrent asks for the same one sharing one call; an answer other
than True, or an error, refuses (a 403, or SOCKS reply 0x02). `decide` remembers answers, not
this proxy. The request is judged by the name asked for, never by its address (see hosts.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from backend.sandbox.hosts import HostAllowlist, normalize_host

log = logging.getLogger(__name__)

Scheme = Literal["http", "https", "socks5"]
"""`https`: an HTTP CONNECT tunnel; `http`: an absolute-URI request; `socks5`: a SOCKS5 CONNECT."""
Outcome = Literal["allowed", "refused"]

HEAD_TIMEOUT = 10.0
"""Bound on reading a request's head (HTTP) or handshake (SOCKS5)."""
HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT = 10.0
"""Bound on resolving and connecting to the origin."""
CLOSE_TIMEOUT = 5.0
HISTORY_LIMIT = 200
"""Requests remembered per session, newest last."""
_CHUNK = 64 * 1024
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the final NUL
_SOCKS_GRANTED, _SOCKS_FAILURE, _SOCKS_NOT_ALLOWED = 0x00, 0x01, 0x02
_SOCKS_HOST_UNREACHABLE, _SOCKS_REFUSED, _SOCKS_BAD_COMMAND, _SOCKS_BAD_ADDRESS = 0x04, 0x05, 0x07, 0x08
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Hop-by-hop or the proxy's own; Host is written anew from the URL (a Host header naming another
# site than the allowlisted one would be sent to the allowlisted server's address otherwise).
_NOT_FORWARDED = frozenset({"connection", "keep-alive", "upgrade", "host"})


@dataclass(frozen=True, kw_only=True)
class NetworkRequest:
    """A sandboxed command's wish to reach `host`:`port`; host normalized (lower case, no trailing dot)."""

    session_id: str
    host: str
    port: int
    scheme: Scheme


@dataclass(frozen=True, kw_only=True)
class RequestRecord:
    """One request of a session's history and what became of it."""

    request: NetworkRequest
    outcome: Outcome


Decide = Callable[[NetworkRequest], Awaitable[bool]]
Resolve = Callable[[str, int], Awaitable[tuple[str, int]]]


@dataclass(kw_only=True)
class _Session:
    session_id: str
    allow: HostAllowlist
    path: Path
    server: asyncio.Server | None = None
    connections: set[asyncio.Task[None]] = field(default_factory=set)
    pending: dict[tuple[str, int], asyncio.Future[bool]] = field(default_factory=dict)
    waiting: int = 0
    history: deque[RequestRecord] = field(default_factory=lambda: deque(maxlen=HISTORY_LIMIT))


@dataclass(frozen=True, kw_only=True)
class _HttpRequest:
    host: str
    port: int
    scheme: Scheme
    forward: bytes | None
    """For an absolute-URI request, the head to send the origin (origin-form, `Connection: close`)."""


class _Malformed(Exception):
    """A request the proxy cannot read; the message is the 400's body."""


class _ConnectFailed(Exception):
    def __init__(self, reason: str, socks_code: int) -> None:
        super().__init__(reason)
        self.socks_code = socks_code


class EgressProxy:
    """The host's egress proxy: one Unix socket per sandboxed session under `directory` (0o700).

    `decide` is asked about hosts off a session's allowlist; `resolve` maps a requested
    (host, port) to the address to connect to (default: connect to the name as asked).
    """

    def __init__(self, directory: Path, *, decide: Decide, resolve: Resolve | None = None) -> None:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(directory, 0o700)  # mkdir leaves an existing folder's mode alone
        self.directory = directory
        """Where the sessions' sockets are."""
        self._decide = decide
        self._resolve = resolve
        self._sessions: dict[str, _Session] = {}
        self._opening = asyncio.Lock()
        self._count = 0
        self._closed = False
        self._changed = asyncio.Event()

    async def __aenter__(self) -> EgressProxy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open_session(self, session_id: str, allow: HostAllowlist) -> Path:
        """The socket path of the session's proxy, started now if it is not already running.

        For a running session this replaces its allowlist.
        """
        async with self._opening:
            if self._closed:
                raise RuntimeError("the egress proxy is closed")
            session = self._sessions.get(session_id)
            if session is not None:
                session.allow = allow
                return session.path
            self._count += 1
            path = self.directory / f"{self._count}.sock"
            if len(os.fsencode(path)) > _SOCKET_PATH_MAX:
                raise ValueError(f"socket path {path} is too long for a Unix socket; use a shorter directory")
            path.unlink(missing_ok=True)
            session = _Session(session_id=session_id, allow=allow, path=path)
            session.server = await asyncio.start_unix_server(
                lambda reader, writer: self._serve(session, reader, writer), path=str(path), limit=HEAD_LIMIT
            )
            os.chmod(path, 0o600)  # the sandboxed command runs as this user
            self._sessions[session_id] = session
            return path

    async def close_session(self, session_id: str) -> None:
        """Stop the session's socket, end its connections and cancel its pending questions (bounded)."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        if session.server is not None:
            session.server.close()
        work: set[asyncio.Future[Any]] = {*session.connections, *session.pending.values()}
        for task in work:
            task.cancel()
        if work:
            await asyncio.wait(work, timeout=CLOSE_TIMEOUT)
        if session.server is not None:
            with suppress(TimeoutError):
                await asyncio.wait_for(session.server.wait_closed(), CLOSE_TIMEOUT)
        session.path.unlink(missing_ok=True)

    async def aclose(self) -> None:
        """Close every session; the proxy opens no more."""
        self._closed = True
        await asyncio.gather(*(self.close_session(s) for s in list(self._sessions)))

    def history(self, session_id: str) -> list[RequestRecord]:
        """The session's latest requests (at most HISTORY_LIMIT), oldest first."""
        session = self._sessions.get(session_id)
        return list(session.history) if session is not None else []

    def waiting(self, session_id: str) -> int:
        """How many of the session's connections wait for `decide` to answer."""
        session = self._sessions.get(session_id)
        return session.waiting if session is not None else 0

    async def until_waiting(self, session_id: str, count: int) -> None:
        """Return once at least `count` of the session's connections wait for an answer (unbounded:
        the caller bounds it)."""
        while self.waiting(session_id) < count:
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _serve(
        self, session: _Session, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        session.connections.add(task)
        deadline = asyncio.get_running_loop().time() + HEAD_TIMEOUT
        try:
            async with asyncio.timeout_at(deadline):
                first = await reader.readexactly(1)
            if first == b"\x05":
                await self._serve_socks(session, deadline, reader, writer)
            else:
                await self._serve_http(session, deadline, first, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            pass  # the client left, or was too slow to say what it wanted
        except Exception:
            log.exception("egress proxy: a connection of session %s failed", session.session_id)
        finally:
            session.connections.discard(task)
            writer.close()

    async def _serve_http(
        self,
        session: _Session,
        deadline: float,
        first: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        try:
            async with asyncio.timeout_at(deadline):
                head = first + await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            too_large = HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
            return await _respond(writer, too_large, "request head too large.")
        except TimeoutError:
            return await _respond(writer, HTTPStatus.REQUEST_TIMEOUT, "request head not received in time.")
        try:
            parsed = _parse_head(head)
        except _Malformed as error:
            return await _respond(writer, HTTPStatus.BAD_REQUEST, f"{error}.")
        where = _authority(parsed.host, parsed.port)
        request = NetworkRequest(
            session_id=session.session_id, host=parsed.host, port=parsed.port, scheme=parsed.scheme
        )
        if not await self._judge(session, request):
            return await _respond(writer, HTTPStatus.FORBIDDEN, f"network access to {where} was refused.")
        try:
            upstream_reader, upstream_writer = await self._connect(parsed.host, parsed.port)
        except _ConnectFailed as error:
            return await _respond(writer, HTTPStatus.BAD_GATEWAY, f"could not connect to {where}: {error}.")
        if parsed.forward is None:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream_writer.write(parsed.forward)
        await _tunnel(reader, writer, upstream_reader, upstream_writer)

    async def _serve_socks(
        self, session: _Session, deadline: float, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        async with asyncio.timeout_at(deadline):
            methods = await reader.readexactly((await reader.readexactly(1))[0])
            if 0x00 not in methods:  # only "no authentication": the socket itself says who asks
                writer.write(b"\x05\xff")
                return await writer.drain()
            writer.write(b"\x05\x00")
            version, command, _, address_type = await reader.readexactly(4)
            if version != 5 or command != 0x01:
                return await _socks_reply(writer, _SOCKS_BAD_COMMAND if version == 5 else _SOCKS_FAILURE)
            if address_type == 0x01:
                raw = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
            elif address_type == 0x03:
                raw = (await reader.readexactly((await reader.readexactly(1))[0])).decode("latin-1")
            elif address_type == 0x04:
                raw = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
            else:
                return await _socks_reply(writer, _SOCKS_BAD_ADDRESS)
            port = int.from_bytes(await reader.readexactly(2), "big")
        host = normalize_host(raw)
        if host is None or port == 0:
            return await _socks_reply(writer, _SOCKS_FAILURE)
        request = NetworkRequest(session_id=session.session_id, host=host, port=port, scheme="socks5")
        if not await self._judge(session, request):
            return await _socks_reply(writer, _SOCKS_NOT_ALLOWED)
        try:
            upstream_reader, upstream_writer = await self._connect(host, port)
        except _ConnectFailed as error:
            return await _socks_reply(writer, error.socks_code)
        writer.write(_socks_reply_bytes(_SOCKS_GRANTED))
        await _tunnel(reader, writer, upstream_reader, upstream_writer)

    async def _judge(self, session: _Session, request: NetworkRequest) -> bool:
        allowed = session.allow.allows(request.host, request.port) or await self._ask(session, request)
        session.history.append(RequestRecord(request=request, outcome="allowed" if allowed else "refused"))
        return allowed

    async def _ask(self, session: _Session, request: NetworkRequest) -> bool:
        # A person gets one question for ten connections to the same new host, not ten.
        key = (request.host, request.port)
        pending = session.pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._decide_safely(request))
            session.pending[key] = pending
            pending.add_done_callback(lambda done: session.pending.pop(key, None))
        session.waiting += 1
        self._notify()
        try:
            # Shielded: one connection giving up must not cancel the question for the others.
            return await asyncio.shield(pending)
        finally:
            session.waiting -= 1
            self._notify()

    async def _decide_safely(self, request: NetworkRequest) -> bool:
        try:
            return (await self._decide(request)) is True
        except Exception:  # fail closed: a question that cannot be asked is a refusal
            where = _authority(request.host, request.port)
            log.exception("egress proxy: deciding on %s failed; refused", where)
            return False

    async def _connect(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                target = await self._resolve(host, port) if self._resolve is not None else (host, port)
                return await asyncio.open_connection(*target)
        except TimeoutError:
            raise _ConnectFailed("timed out", _SOCKS_HOST_UNREACHABLE) from None
        except socket.gaierror as error:
            raise _ConnectFailed(f"name not resolved ({error.strerror})", _SOCKS_HOST_UNREACHABLE) from None
        except ConnectionRefusedError:
            raise _ConnectFailed("connection refused", _SOCKS_REFUSED) from None
        except OSError as error:
            raise _ConnectFailed(error.strerror or str(error), _SOCKS_FAILURE) from None


def _parse_head(head: bytes) -> _HttpRequest:
    """A proxy request's head: CONNECT host:port, or an absolute http:// URI to forward."""
    lines = head.decode("latin-1").split("\r\n")[:-2]
    if any("\r" in line or "\n" in line or "\0" in line for line in lines):
        raise _Malformed("stray line breaks in the request head")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise _Malformed("not an HTTP/1 proxy request")
    method, target, version = parts
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):
            raise _Malformed("a malformed header line")
        headers.append((name, value.strip()))
    if method == "CONNECT":
        host, port = _split_authority(target, default=None)
        return _HttpRequest(host=host, port=port, scheme="https", forward=None)
    try:
        url = urlsplit(target)
    except ValueError:
        raise _Malformed("a malformed URL") from None
    if url.scheme.lower() == "https":
        raise _Malformed("an https:// URL goes through CONNECT")
    if url.scheme.lower() != "http" or not url.netloc:
        raise _Malformed("the target is neither CONNECT host:port nor an absolute http:// URL")
    host, port = _split_authority(url.netloc.rpartition("@")[2], default=80)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    named = {t.strip().lower() for n, v in headers if n.lower() == "connection" for t in v.split(",")}
    kept = [
        f"{n}: {v}"
        for n, v in headers
        if n.lower() not in _NOT_FORWARDED and n.lower() not in named and not n.lower().startswith("proxy-")
    ]
    host_header = host if port == 80 else _authority(host, port)
    lines = [f"{method} {path} {version}", f"Host: {host_header}", *kept, "Connection: close", "", ""]
    forward = "\r\n".join(lines)
    return _HttpRequest(host=host, port=port, scheme="http", forward=forward.encode("latin-1"))


def _split_authority(text: str, *, default: int | None) -> tuple[str, int]:
    if text.startswith("["):
        end = text.find("]") + 1
        host, rest = (text[:end], text[end:]) if end else (text, "")
    else:
        host, colon, port_text = text.partition(":")
        rest = colon + port_text
    if rest.startswith(":") and rest[1:].isascii() and rest[1:].isdigit() and 1 <= int(rest[1:]) <= 65535:
        port = int(rest[1:])
    elif not rest and default is not None:
        port = default
    else:
        raise _Malformed(f"no valid port in {text!r}")
    normalized = normalize_host(host)
    if normalized is None:
        raise _Malformed(f"{host!r} is not a host name or IP address")
    return normalized, port


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _respond(writer: asyncio.StreamWriter, status: HTTPStatus, message: str) -> None:
    body = f"Overseer: {message}\n".encode()
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    with suppress(ConnectionError, TimeoutError):
        await asyncio.wait_for(writer.drain(), CLOSE_TIMEOUT)


def _socks_reply_bytes(code: int) -> bytes:
    return bytes([0x05, code, 0x00, 0x01]) + bytes(6)  # bound address 0.0.0.0:0: clients ignore it


async def _socks_reply(writer: asyncio.StreamWriter, code: int) -> None:
    writer.write(_socks_reply_bytes(code))
    with suppress(ConnectionError, TimeoutError):
        await asyncio.wait_for(writer.drain(), CLOSE_TIMEOUT)


async def _tunnel(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways. The client's end of sending only half-closes the origin (its request may
    still be answered); the origin's end, or an error either way, ends the whole connection."""
    outbound = asyncio.ensure_future(_copy(client_reader, upstream_writer, half_close=True))
    try:
        await _copy(upstream_reader, client_writer, half_close=False)
    finally:
        outbound.cancel()
        upstream_writer.close()
        client_writer.close()
        await asyncio.wait([outbound], timeout=CLOSE_TIMEOUT)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, half_close: bool) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if half_close and writer.can_write_eof():
            writer.write_eof()
            return
    except OSError:  # reset, broken pipe: the same end as an EOF
        pass
    writer.close()
