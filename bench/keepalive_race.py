"""Why a host dropped an answer (issue 31, item 12): uvicorn's keep-alive timeout racing a reused connection.

The 600-session bench lost one answer POST to `ReadError('')`. This reproduces that error
deterministically with the two libraries involved: uvicorn as `overseer serve` runs it (its
`server_config`: the guarded h11 protocol, the asyncio loop) and httpx:

1. The client makes a request and keeps the connection. uvicorn arms its keep-alive timer when it
   has sent the response (`t_s + timeout_keep_alive`); httpx starts its idle clock when it has
   read the response (`t_c + keepalive_expiry`, t_c >= t_s). With both at 5 s (both defaults) the
   client thinks the connection good for `t_c - t_s` longer than the server keeps it: longer
   still when the client is busy (a loaded client reads responses late). `--client-delay` plays
   such a client.
2. At the server's deadline its timer is due. On a loaded loop other callbacks run ahead of it in
   the same iteration; a request that arrives then is in the socket, unread, when the timer closes
   the connection. A socket closed with unread data sends RST, not FIN; the client, which saw
   no FIN and so reused the connection (httpcore checks for one), reads ECONNRESET: anyio's
   `BrokenResourceError`, which httpcore turns into `ReadError('')` (no message). A plain FIN
   would have been `RemoteProtocolError('Server disconnected without sending a response.')`.
   The script places one callback ahead of the timer (what load does) and sends the request
   from it; nothing else is changed.

    .venv/bin/python bench/keepalive_race.py                        # both defaults: ReadError('')
    .venv/bin/python bench/keepalive_race.py --client-keepalive 2   # the clients' setting: no race

Prints one JSON line: the two deadlines, whether the client reused the connection, the outcome.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import select
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import uvicorn  # noqa: E402

from backend.api.server_limits import KEEP_ALIVE_TIMEOUT, server_config  # noqa: E402
from backend.testing.cluster import CLIENT_KEEPALIVE_EXPIRY  # noqa: E402

BOUND = 10.0
"""Seconds any one step may take before the script gives up on it."""


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


class Server(uvicorn.Server):
    """uvicorn in a thread, configured as `overseer serve`, on a given socket."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.loop = asyncio.get_running_loop()
        self.ready.set()

    def install_signal_handlers(self) -> None:  # not the main thread
        pass


def race(*, server_keepalive: int, client_keepalive: float, client_delay: float) -> dict[str, Any]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = server_config(
        app, host="127.0.0.1", port=port, loop="asyncio", lifespan="off", log_level="warning",
        timeout_keep_alive=server_keepalive,
    )
    server = Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    if not server.ready.wait(BOUND):
        raise SystemExit("the server did not start")
    assert server.loop is not None
    loop = server.loop
    send_now = threading.Event()
    result: dict[str, Any] = {"server_keepalive_s": server_keepalive, "client_keepalive_s": client_keepalive}
    limits = httpx.Limits(keepalive_expiry=client_keepalive)

    async def client_side() -> None:  # an async client, as the bench's (httpx over anyio)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as client:
            async with client.stream("GET", "/") as first:
                time.sleep(client_delay)  # a busy client reads the response late; httpx's idle clock starts then
                await first.aread()
            (proto,) = server.server_state.connections
            server_deadline = proto.timeout_keep_alive_task.when()  # loop.time() is time.monotonic()
            (pooled,) = client._transport._pool.connections  # type: ignore[attr-defined]
            client_expiry = pooled._connection._expire_at
            result["client_expiry_minus_server_deadline_s"] = round(client_expiry - server_deadline, 4)
            server_socket = proto.transport.get_extra_info("socket")

            def ahead_of_the_timer() -> None:
                # Runs in the loop iteration whose due timers include the keep-alive one, ahead of
                # it, and (as on a loaded loop) until past the keep-alive deadline.
                time.sleep(max(0.0, server_deadline - loop.time()))
                send_now.set()
                try:  # wait (bounded) until the request is in the socket, unread by the loop
                    readable, _, _ = select.select([server_socket], [], [], 1.0)
                except (OSError, ValueError):  # the client closed the connection: it had expired for it
                    readable = []
                result["server_socket_readable_when_the_timer_ran"] = bool(readable)

            def at_the_deadline() -> None:  # just before it: the keep-alive timer, due after one callback
                proto.timeout_keep_alive_task.cancel()
                loop.call_soon(ahead_of_the_timer)
                proto.timeout_keep_alive_task = loop.call_later(0, proto.timeout_keep_alive_handler)

            loop.call_soon_threadsafe(lambda: loop.call_at(server_deadline - 0.05, at_the_deadline))
            if not await asyncio.to_thread(send_now.wait, server_keepalive + BOUND):
                raise SystemExit("the server's keep-alive deadline never came")
            result["client_sends_at_minus_server_deadline_s"] = round(time.monotonic() - server_deadline, 4)
            result["client_reuses_the_connection"] = not pooled.has_expired()
            try:
                second = await client.get("/")
                result["outcome"] = str(second.status_code)
            except httpx.HTTPError as exc:
                result["outcome"] = repr(exc)

    asyncio.run(client_side())
    server.should_exit = True
    thread.join(BOUND)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-keepalive", type=int, default=KEEP_ALIVE_TIMEOUT,
                        help=f"uvicorn's timeout_keep_alive (overseer serve's: {KEEP_ALIVE_TIMEOUT})")
    parser.add_argument("--client-keepalive", type=float, default=5.0, help=(
        f"httpx's keepalive_expiry (httpx's default 5; the project's clients use {CLIENT_KEEPALIVE_EXPIRY})"))
    parser.add_argument("--client-delay", type=float, default=0.2, help="seconds a busy client takes to close a response")
    args = parser.parse_args()
    print(json.dumps(race(
        server_keepalive=args.server_keepalive, client_keepalive=args.client_keepalive, client_delay=args.client_delay
    )))


if __name__ == "__main__":
    main()
