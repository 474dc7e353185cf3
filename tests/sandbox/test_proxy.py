"""The egress proxy: allowlisted hosts are reached, others are put to `decide`, over real sockets.

Origins are small servers on 127.0.0.1; `resolve` points the test's names (`echo.test`,
`web.test`, `new.test`) at them, as the allowlist decides by name and never by address.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest
import pytest_asyncio

from backend.sandbox.hosts import HostAllowlist
from backend.sandbox.proxy import EgressProxy, NetworkRequest, RequestRecord

BOUND = 10.0
SESSION = "session-1"
T = TypeVar("T")


async def within(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, BOUND)


@dataclass(kw_only=True)
class Decider:
    """A scripted `decide`: records each question, answers `answer` (or raises it) once `release` is set."""

    answer: bool | Exception = False
    calls: list[NetworkRequest] = field(default_factory=list)
    release: asyncio.Event | None = None

    async def __call__(self, request: NetworkRequest) -> bool:
        self.calls.append(request)
        if self.release is not None:
            await self.release.wait()
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@dataclass(kw_only=True)
class World:
    proxy: EgressProxy
    path: Path
    decider: Decider
    echo_port: int
    clients: list[asyncio.StreamWriter] = field(default_factory=list)


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers every chunk with `echo:` and it; says `bye` at the client's EOF, then closes."""
    while data := await reader.read(65536):
        writer.write(b"echo:" + data)
        await writer.drain()
    writer.write(b"bye")
    await writer.drain()
    writer.close()


async def _web(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """An HTTP origin whose answer's body is the request head it received."""
    head = await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(head), head))
    await writer.drain()
    writer.close()


@pytest_asyncio.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    echo = await asyncio.start_server(_echo, "127.0.0.1", 0)
    web = await asyncio.start_server(_web, "127.0.0.1", 0)
    ports = {"echo.test": _port(echo), "new.test": _port(echo), "web.test": _port(web)}

    async def resolve(host: str, port: int) -> tuple[str, int]:
        return ("127.0.0.1", ports[host]) if host in ports else (host, port)

    decider = Decider()
    async with EgressProxy(tmp_path / "proxy", decide=decider, resolve=resolve) as proxy:
        path = await proxy.open_session(SESSION, HostAllowlist(["echo.test", "web.test", "127.0.0.1"]))
        world = World(proxy=proxy, path=path, decider=decider, echo_port=_port(echo))
        yield world
        for client in world.clients:
            client.close()
    for server in (echo, web):
        server.close()
        await within(server.wait_closed())


def _port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


async def open_proxy(world: World) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await within(asyncio.open_unix_connection(str(world.path)))
    world.clients.append(writer)
    return reader, writer


async def http_connect(world: World, target: str) -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    """CONNECT through the proxy: the answer's head, and the connection (a tunnel if it is a 200)."""
    reader, writer = await open_proxy(world)
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    return await within(reader.readuntil(b"\r\n\r\n")), reader, writer


async def socks_connect(
    world: World, address: bytes, port: int
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """A SOCKS5 CONNECT (`address` is ATYP and DST.ADDR): the reply code and the connection."""
    reader, writer = await open_proxy(world)
    writer.write(b"\x05\x01\x00")
    assert await within(reader.readexactly(2)) == b"\x05\x00"
    writer.write(b"\x05\x01\x00" + address + port.to_bytes(2, "big"))
    reply = await within(reader.readexactly(10))
    assert reply[0] == 5
    return reply[1], reader, writer


def domain(name: str) -> bytes:
    return b"\x03" + bytes([len(name)]) + name.encode()


def ipv4(address: str) -> bytes:
    return b"\x01" + socket.inet_aton(address)


async def assert_echoes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"ping")
    assert await within(reader.readexactly(9)) == b"echo:ping"
    writer.write(b"pong!")
    assert await within(reader.readexactly(10)) == b"echo:pong!"
    writer.write_eof()
    assert await within(reader.read()) == b"bye"
    writer.close()


async def test_an_allowlisted_connect_tunnel_carries_bytes_both_ways(world: World):
    head, reader, writer = await http_connect(world, "echo.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    await assert_echoes(reader, writer)
    assert world.decider.calls == []
    request = NetworkRequest(session_id=SESSION, host="echo.test", port=443, scheme="https")
    assert world.proxy.history(SESSION) == [RequestRecord(request=request, outcome="allowed")]


async def test_a_client_that_stops_sending_still_gets_the_answer(world: World):
    head, reader, writer = await http_connect(world, "echo.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    writer.write(b"last words")
    writer.write_eof()
    assert await within(reader.read()) == b"echo:last wordsbye"


async def test_an_absolute_uri_request_reaches_the_origin_and_its_answer_comes_back(world: World):
    reader, writer = await open_proxy(world)
    writer.write(
        b"GET http://web.test/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\nX-Kept: yes\r\n"
        b"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
        b"Connection: keep-alive, X-Hop\r\n"
        b"X-Hop: 1\r\n\r\n"
    )
    answer = await within(reader.read())
    head, _, seen = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    lines = seen.decode().split("\r\n")
    assert lines[0] == "GET /path?q=1 HTTP/1.1"
    # Host comes from the URL: the allowlisted server is never asked for another site.
    assert "Host: web.test" in lines and "X-Kept: yes" in lines and "Connection: close" in lines
    assert not [line for line in lines if line.lower().startswith(("proxy-", "x-hop", "host: else"))]
    assert world.decider.calls == []


async def test_socks5_reaches_an_allowlisted_name(world: World):
    code, reader, writer = await socks_connect(world, domain("echo.test"), 7)
    assert code == 0x00
    await assert_echoes(reader, writer)
    assert world.proxy.history(SESSION)[0].request.scheme == "socks5"


async def test_socks5_reaches_an_allowlisted_ipv4_address(world: World):
    code, reader, writer = await socks_connect(world, ipv4("127.0.0.1"), world.echo_port)
    assert code == 0x00
    await assert_echoes(reader, writer)


async def test_a_host_off_the_allowlist_is_put_to_decide_and_refused_with_a_403(world: World):
    head, reader, _ = await http_connect(world, "New.Test:443")
    assert head.startswith(b"HTTP/1.1 403 ")
    assert b"Overseer: network access to new.test:443 was refused." in await within(reader.read())
    request = NetworkRequest(session_id=SESSION, host="new.test", port=443, scheme="https")
    assert world.decider.calls == [request]
    assert world.proxy.history(SESSION) == [RequestRecord(request=request, outcome="refused")]


async def test_a_host_off_the_allowlist_is_connected_when_decide_allows_it(world: World):
    world.decider.answer = True
    head, reader, writer = await http_connect(world, "new.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    await assert_echoes(reader, writer)
    assert len(world.decider.calls) == 1


async def test_a_socks_request_refused_by_decide_gets_reply_0x02(world: World):
    code, _, _ = await socks_connect(world, domain("new.test"), 443)
    assert code == 0x02
    request = NetworkRequest(session_id=SESSION, host="new.test", port=443, scheme="socks5")
    assert world.decider.calls == [request]


async def test_a_socks_request_for_an_ipv6_address_off_the_list_is_put_to_decide(world: World):
    code, _, _ = await socks_connect(world, b"\x04" + socket.inet_pton(socket.AF_INET6, "2001:db8::1"), 443)
    assert code == 0x02
    assert [(r.host, r.port) for r in world.decider.calls] == [("2001:db8::1", 443)]


async def test_a_socks_client_that_offers_only_authentication_is_turned_away(world: World):
    reader, writer = await open_proxy(world)
    writer.write(b"\x05\x01\x02")  # username/password only
    assert await within(reader.read()) == b"\x05\xff"


async def test_a_socks_command_other_than_connect_gets_reply_0x07(world: World):
    reader, writer = await open_proxy(world)
    writer.write(b"\x05\x01\x00")
    assert await within(reader.readexactly(2)) == b"\x05\x00"
    writer.write(b"\x05\x02\x00" + domain("echo.test") + (7).to_bytes(2, "big"))  # BIND
    assert (await within(reader.read()))[:2] == b"\x05\x07"
    assert world.proxy.history(SESSION) == []


async def test_the_proxy_does_not_remember_answers_so_each_request_asks(world: World):
    head, _, _ = await http_connect(world, "new.test:443")
    assert head.startswith(b"HTTP/1.1 403 ")
    world.decider.answer = True
    head, _, _ = await http_connect(world, "new.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert len(world.decider.calls) == 2


async def test_ten_concurrent_requests_for_one_new_host_ask_once(world: World):
    world.decider.answer, world.decider.release = True, asyncio.Event()
    requests = [asyncio.create_task(http_connect(world, "new.test:443")) for _ in range(10)]
    await within(world.proxy.until_waiting(SESSION, 10))
    world.decider.release.set()
    answers = await within(asyncio.gather(*requests))
    assert all(head.startswith(b"HTTP/1.1 200 ") for head, _, _ in answers)
    assert len(world.decider.calls) == 1
    assert world.proxy.waiting(SESSION) == 0


@pytest.mark.parametrize(
    "head",
    [
        b"hello there\r\n\r\n",
        b"GET /relative HTTP/1.1\r\nHost: web.test\r\n\r\n",
        b"GET https://web.test/ HTTP/1.1\r\n\r\n",
        b"CONNECT echo.test HTTP/1.1\r\n\r\n",
        b"CONNECT echo.test:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT bad!host:443 HTTP/1.1\r\n\r\n",
        b"GET http://web.test/ HTTP/1.1\r\nX-A: 1\nX-Injected: 2\r\n\r\n",
        b"GET http://web.test/ SPDY/3\r\n\r\n",
    ],
)
async def test_a_malformed_request_gets_a_400_and_the_proxy_goes_on_serving(world: World, head: bytes):
    reader, writer = await open_proxy(world)
    writer.write(head)
    assert (await within(reader.read())).startswith(b"HTTP/1.1 400 ")
    head_ok, tunnel_reader, tunnel_writer = await http_connect(world, "echo.test:443")
    assert head_ok.startswith(b"HTTP/1.1 200 ")
    await assert_echoes(tunnel_reader, tunnel_writer)
    assert world.decider.calls == []


async def test_a_request_head_over_the_limit_gets_a_431(world: World):
    reader, writer = await open_proxy(world)
    writer.write(b"GET http://web.test/ HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n")
    assert (await within(reader.read())).startswith(b"HTTP/1.1 431 ")


async def test_decide_failing_counts_as_a_refusal_and_the_proxy_survives(world: World):
    world.decider.answer = RuntimeError("the approval broker is gone")
    head, _, _ = await http_connect(world, "new.test:443")
    assert head.startswith(b"HTTP/1.1 403 ")
    code, _, _ = await socks_connect(world, domain("new.test"), 443)
    assert code == 0x02
    head, reader, writer = await http_connect(world, "echo.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    await assert_echoes(reader, writer)


async def test_an_unreachable_origin_gets_a_502_or_socks_reply_0x05(world: World):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    head, reader, _ = await http_connect(world, f"127.0.0.1:{closed}")
    assert head.startswith(b"HTTP/1.1 502 ")
    assert b"could not connect to 127.0.0.1" in await within(reader.read())
    code, _, _ = await socks_connect(world, ipv4("127.0.0.1"), closed)
    assert code == 0x05


async def test_closing_a_session_ends_its_tunnels_and_removes_its_socket(world: World):
    head, reader, _ = await http_connect(world, "echo.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    await within(world.proxy.close_session(SESSION))
    assert await within(reader.read()) == b""
    assert not world.path.exists()
    assert world.proxy.history(SESSION) == []


async def test_a_pending_question_is_cancelled_when_its_session_closes(world: World):
    world.decider.release = asyncio.Event()  # never set: the person never answers
    asking = asyncio.create_task(http_connect(world, "new.test:443"))
    await within(world.proxy.until_waiting(SESSION, 1))
    await within(world.proxy.close_session(SESSION))
    with pytest.raises(asyncio.IncompleteReadError):
        await within(asking)


async def test_a_session_keeps_its_socket_and_takes_a_new_allowlist_when_opened_again(world: World):
    path = await world.proxy.open_session(SESSION, HostAllowlist(["new.test"]))
    assert path == world.path
    head, _, _ = await http_connect(world, "new.test:443")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert world.decider.calls == []


async def test_the_sockets_are_private_to_their_user(world: World):
    assert stat.S_IMODE(os.stat(world.path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(world.path).st_mode) == 0o600
    other = await world.proxy.open_session("session-2", HostAllowlist())
    assert other != world.path and len(os.fsencode(other)) <= 107


async def test_the_history_keeps_only_the_latest_requests(world: World):
    for _ in range(201):
        head, _, writer = await http_connect(world, "new.test:443")
        assert head.startswith(b"HTTP/1.1 403 ")
        writer.close()
    assert len(world.proxy.history(SESSION)) == 200


async def test_a_closed_proxy_opens_no_session(tmp_path: Path):
    proxy = EgressProxy(tmp_path / "proxy", decide=Decider())
    await proxy.aclose()
    with pytest.raises(RuntimeError):
        await proxy.open_session(SESSION, HostAllowlist())
