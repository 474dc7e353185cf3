"""The bridge inside the sandbox, run as the sandbox runs it (`python3 -I -S netbridge.py SOCKET PORT
-- COMMAND`) but outside any namespace: its TCP port on this machine's loopback, a free one."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import TypeVar

import pytest
import pytest_asyncio

import backend.sandbox
from backend.sandbox.hosts import HostAllowlist
from backend.sandbox.proxy import EgressProxy, NetworkRequest

NETBRIDGE = Path(backend.sandbox.__file__).parent / "netbridge.py"
BOUND = 30.0  # two Python start-ups on a loaded machine
T = TypeVar("T")


async def within(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, BOUND)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def bridge(socket_path: Path, code: str, *, port: int | None = None) -> asyncio.subprocess.Process:
    """The bridge running `python -c code` as its command, stdout piped."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", str(NETBRIDGE), str(socket_path), str(port or free_port()), "--",
        sys.executable, "-I", "-c", code,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def run(socket_path: Path, code: str) -> tuple[int, str]:
    process = await bridge(socket_path, code)
    out, _ = await within(process.communicate())
    return process.returncode or 0, out.decode()


@pytest_asyncio.fixture
async def unix_server(tmp_path: Path) -> AsyncIterator[Path]:
    """A Unix socket server that answers `reply:` and what it was sent, once the sender is done."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"reply:" + await reader.read())
        await writer.drain()
        writer.close()

    path = tmp_path / "proxy.sock"
    server = await asyncio.start_unix_server(answer, path=str(path))
    yield path
    server.close()


CLIENT = """
import os, socket
with socket.create_connection(("127.0.0.1", int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1]))) as s:
    s.sendall(b"hello through the bridge")
    s.shutdown(socket.SHUT_WR)
    print(b"".join(iter(lambda: s.recv(65536), b"")).decode(), end="")
"""


async def test_the_bridge_relays_the_commands_connection_to_the_unix_socket(unix_server: Path):
    code, out = await run(unix_server, CLIENT)
    assert (code, out) == (0, "reply:hello through the bridge")


async def test_the_command_is_given_the_proxy_variables(unix_server: Path):
    port = free_port()
    names = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
    names += ["ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"]
    code = f"import os, json; print(json.dumps({{n: os.environ.get(n) for n in {names!r}}}))"
    process = await bridge(unix_server, code, port=port)
    out, _ = await within(process.communicate())
    http, socks = f"http://127.0.0.1:{port}", f"socks5h://127.0.0.1:{port}"
    assert json.loads(out) == {
        "HTTP_PROXY": http, "HTTPS_PROXY": http, "http_proxy": http, "https_proxy": http,
        "ALL_PROXY": socks, "all_proxy": socks, "NO_PROXY": "", "no_proxy": "",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("raise SystemExit(7)", 7),
        ("pass", 0),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM),
    ],
)
async def test_the_bridge_exits_with_the_commands_status(unix_server: Path, code: str, status: int):
    assert (await run(unix_server, code))[0] == status


async def test_a_command_that_cannot_be_found_exits_127(unix_server: Path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", str(NETBRIDGE), str(unix_server), str(free_port()),
        "--", "no-such-command-here",
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await within(process.communicate())
    assert process.returncode == 127
    assert b"no-such-command-here" in err


async def test_a_port_in_use_is_a_bridge_failure_and_runs_nothing(unix_server: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = await bridge(unix_server, "print('ran')", port=taken.getsockname()[1])
        out, _ = await within(process.communicate())
    assert (process.returncode, out) == (125, b"")


async def test_sigterm_to_the_bridge_reaches_the_command(unix_server: Path):
    code = "import os, signal; print(os.getpid(), flush=True); signal.pause()"
    process = await bridge(unix_server, code)
    assert process.stdout is not None
    child = int(await within(process.stdout.readline()))
    try:
        process.send_signal(signal.SIGTERM)
        assert await within(process.wait()) == 128 + signal.SIGTERM
    finally:
        try:
            os.kill(child, signal.SIGKILL)  # only if the signal never reached it
        except ProcessLookupError:
            pass


WEB_CLIENT = """
import urllib.error, urllib.request
print(urllib.request.urlopen("http://web.test/hello", timeout=20).read().decode())
try:
    urllib.request.urlopen("http://elsewhere.test/", timeout=20)
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode().strip())
"""


async def test_a_command_reaches_an_allowlisted_origin_through_the_bridge_and_the_proxy(tmp_path: Path):
    async def web(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")[0]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(request_line), request_line))
        await writer.drain()
        writer.close()

    async def resolve(host: str, port: int) -> tuple[str, int]:
        return ("127.0.0.1", origin.sockets[0].getsockname()[1]) if host == "web.test" else (host, port)

    asked: list[NetworkRequest] = []

    async def decide(request: NetworkRequest) -> bool:
        asked.append(request)
        return False

    origin = await asyncio.start_server(web, "127.0.0.1", 0)
    async with EgressProxy(tmp_path / "proxy", decide=decide, resolve=resolve) as proxy:
        path = await proxy.open_session("s", HostAllowlist(["web.test"]))
        code, out = await run(path, WEB_CLIENT)
    origin.close()
    assert code == 0
    assert out.splitlines() == [
        "GET /hello HTTP/1.1",
        "403 Overseer: network access to elsewhere.test:80 was refused.",
    ]
    assert [(r.host, r.port, r.scheme) for r in asked] == [("elsewhere.test", 80, "http")]
