"""uvicorn's limits against a real server over real sockets (issue 31, item 6)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from backend.api.server_limits import (
    KEEP_ALIVE_TIMEOUT,
    MAX_CONCURRENCY,
    MAX_HEADER_BYTES,
    guarded_h11,
    server_config,
)

BOUND = 10.0
"""How long a test waits for the server to close a connection before it fails."""


async def hello(scope, receive, send) -> None:  # noqa: ANN001 - a bare ASGI app
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


class Started(uvicorn.Server):
    """A uvicorn server that says when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def running(**overrides) -> Iterator[int]:
    """A uvicorn server with `server_config`'s limits (and `overrides`) on a free port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = server_config(hello, host="127.0.0.1", port=port, log_level="warning", lifespan="off", **overrides)
    server = Started(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert server.ready.wait(BOUND), "the server did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(BOUND)
        sock.close()


def connect(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=BOUND)
    return client


def closed_by_server(client: socket.socket) -> bool:
    """True when the server closes the connection within BOUND (reads until EOF), False on timeout."""
    try:
        while client.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_a_connection_sending_its_headers_slowly_is_closed_within_the_header_timeout():
    with running(http=guarded_h11(header_timeout=0.5)) as port:
        slow = connect(port)
        started = time.monotonic()
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        assert closed_by_server(slow)
        assert time.monotonic() - started < BOUND


def test_a_connection_that_sends_nothing_is_closed_too():
    with running(http=guarded_h11(header_timeout=0.5)) as port:
        assert closed_by_server(connect(port))


def test_trickling_bytes_does_not_move_the_deadline():
    with running(http=guarded_h11(header_timeout=1.0)) as port:
        slow = connect(port)
        slow.settimeout(0.2)
        started, closed = time.monotonic(), False
        while time.monotonic() - started < BOUND and not closed:
            try:
                slow.sendall(b"X-A: b\r\n")
                closed = slow.recv(4096) == b""
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
        assert closed, "a client trickling header lines kept its connection"


def test_a_prompt_request_is_answered_and_the_next_on_the_same_connection_has_its_own_deadline():
    with running(http=guarded_h11(header_timeout=0.5)) as port:
        client = connect(port)
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(4096).startswith(b"HTTP/1.1 200")
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # the next request, never finished
        assert closed_by_server(client)


def test_one_address_may_hold_only_so_many_connections():
    with running(http=guarded_h11(header_timeout=BOUND, connections_per_client=3)) as port:
        held = [connect(port) for _ in range(3)]
        for client in held:  # each is served (and counted) before the next test
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert client.recv(4096).startswith(b"HTTP/1.1 200")
        extra = connect(port)
        assert closed_by_server(extra)
        held[0].close()
        again = connect(port)
        again.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert again.recv(4096).startswith(b"HTTP/1.1 200")


def test_serve_runs_with_the_documented_limits():
    config = server_config(hello, host="127.0.0.1", port=0)
    assert config.timeout_keep_alive == KEEP_ALIVE_TIMEOUT
    assert config.h11_max_incomplete_event_size == MAX_HEADER_BYTES
    assert config.limit_concurrency == MAX_CONCURRENCY
    assert config.http.__name__ == "GuardedH11"


def test_headers_growing_past_the_cap_are_refused_before_they_end():
    with running() as port:
        client = connect(port)
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEADER_BYTES + 1))
        assert client.recv(4096).startswith(b"HTTP/1.1 400")
