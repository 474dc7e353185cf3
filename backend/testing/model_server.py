"""A real HTTP server on 127.0.0.1 that answers the OpenAI and Anthropic model APIs from a script.

Tests and the offline demo point LiteLLM (`openai/<any>` at `openai_base`, `anthropic/<any>` at
`url`) or the Claude Code CLI (`ANTHROPIC_BASE_URL=url`) at it, so the whole client path runs for
real while the model's answers are written by the test:

    with ScriptedModelServer([Reply(tool_calls=[ScriptedToolCall(name="t", arguments={})]),
                              Reply(text="done")]) as srv:
        ...  # drive the engine with api_base=srv.openai_base
        srv.assert_all_used()

The script is a list consumed one reply per request, or one callable answering every request;
`push` appends replies (which take precedence over a callable). A request that finds no reply
left gets HTTP 500 with "scripted model: no reply left for request #N" and is recorded in
`failures`, which `assert_all_used` also reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.testing import anthropic_wire, openai_wire
from backend.testing.script import Api, ModelRequest, Reply, ReplySource

logger = logging.getLogger(__name__)

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
HANG_LIMIT = 60.0
"""The longest a scripted hang lasts when neither the client hangs up nor the server stops."""


class _Uvicorn(uvicorn.Server):
    """uvicorn that says when it is listening and can be woken to exit, so neither `start` nor
    `stop` waits on uvicorn's 0.1 s polling tick."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        await super().startup(sockets=sockets)
        self.listening.set()

    async def main_loop(self) -> None:
        assert self._wake is not None
        counter = 0
        while not await self.on_tick(counter):
            # on_tick refreshes the Date header every 10th tick; one tick per second here.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 1.0)
            counter = (counter + 10) % 864000

    async def exit_requested(self, within: float) -> bool:
        """Wait at most `within` seconds for `request_exit`; True if it came."""
        if self._wake is None:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), within)
        return self._wake.is_set()

    def request_exit(self) -> None:
        """Ask the server to shut down; callable from any thread."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(wake.set)


class ScriptedModelServer:
    """A scripted model behind real OpenAI Chat Completions and Anthropic Messages endpoints."""

    def __init__(self, script: list | Callable[[ModelRequest], Reply] | None = None) -> None:
        self._cond = threading.Condition()
        self._queue: deque[ReplySource] = deque()
        self._fallback: Callable[[ModelRequest], Reply] | None = None
        if callable(script):
            self._fallback = script
        elif script is not None:
            self._queue.extend(script)
        self.requests: list[ModelRequest] = []
        self.failures: list[str] = []
        """Loud problems seen while serving: an exhausted script, a reply function that raised."""
        self.unknown_paths: list[str] = []
        """Requests to paths this server does not serve (answered 404), e.g. a client probing."""
        self.url = ""
        self.openai_base = ""
        self.anthropic_base = ""
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.app = self._build_app()

    # -- script --------------------------------------------------------------------------------

    def push(self, *replies: ReplySource) -> None:
        """Append replies to the script; they are used before a callable script is consulted."""
        with self._cond:
            self._queue.extend(replies)

    def assert_all_used(self) -> None:
        """Raise AssertionError naming every scripted reply no request consumed, and any failure."""
        with self._cond:
            unused = list(self._queue)
            failures = list(self.failures)
        problems = [f"unused scripted reply #{i}: {r!r}" for i, r in enumerate(unused, 1)] + failures
        if problems:
            raise AssertionError("scripted model: " + "; ".join(problems))

    def wait_for_requests(self, n: int, timeout: float = 10) -> None:
        """Block until at least `n` requests have arrived; TimeoutError after `timeout` seconds.

        From async code whose own loop sends the requests, use `await_requests` instead."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"scripted model: expected {n} requests, got {len(self.requests)}")

    async def await_requests(self, n: int, timeout: float = 10) -> None:
        """`wait_for_requests` without blocking the event loop."""
        await anyio.to_thread.run_sync(self.wait_for_requests, n, timeout)

    @property
    def last_request(self) -> ModelRequest:
        """The most recent request; AssertionError if none arrived."""
        with self._cond:
            if not self.requests:
                raise AssertionError("scripted model: no request received")
            return self.requests[-1]

    def _record(self, request: ModelRequest) -> tuple[int, ReplySource | None]:
        with self._cond:
            self.requests.append(request)
            number = len(self.requests)
            source = self._queue.popleft() if self._queue else self._fallback
            self._cond.notify_all()
        return number, source

    def _fail(self, message: str) -> str:
        logger.error(message)
        with self._cond:
            self.failures.append(message)
        return message

    # -- HTTP ----------------------------------------------------------------------------------

    def _build_app(self) -> Starlette:
        async def health(_: Request) -> Response:
            return JSONResponse({"ok": True, "server": "overseer-scripted-model"})

        async def models(_: Request) -> Response:
            return JSONResponse(openai_wire.models_body(["scripted"]))

        async def chat_completions(request: Request) -> Response:
            return await self._answer("openai", request)

        async def messages(request: Request) -> Response:
            return await self._answer("anthropic", request)

        async def count_tokens(request: Request) -> Response:
            body = await _json_body(request)
            if body is None:
                return JSONResponse(
                    anthropic_wire.error_body(400, "body is not a JSON object"), status_code=400
                )
            return JSONResponse(anthropic_wire.count_tokens_body(ModelRequest.from_body("anthropic", body)))

        async def unknown(request: Request) -> Response:
            path = f"{request.method} {request.url.path}"
            with self._cond:
                self.unknown_paths.append(path)
            return JSONResponse(
                openai_wire.error_body(404, f"scripted model: no route {path}"), status_code=404
            )

        routes = [
            Route("/", health, methods=["GET", "HEAD"]),
            Route("/api/hello", health, methods=["GET", "HEAD"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/{path:path}", unknown, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]),
        ]
        return Starlette(routes=routes)

    async def _answer(self, api: Api, http_request: Request) -> Response:
        wire: Any = openai_wire if api == "openai" else anthropic_wire
        body = await _json_body(http_request)
        if body is None:
            return JSONResponse(wire.error_body(400, "body is not a JSON object"), status_code=400)
        request = ModelRequest.from_body(api, body)
        number, source = self._record(request)
        if source is None:
            message = self._fail(f"scripted model: no reply left for request #{number}")
            return JSONResponse(wire.error_body(500, message), status_code=500)
        if isinstance(source, Reply):
            reply = source
        else:
            # In a worker thread so a reply function may block (e.g. to hold a request open).
            try:
                reply = await run_in_threadpool(source, request)
            except Exception as exc:  # noqa: BLE001 - reported to the client and to failures
                message = self._fail(f"scripted model: reply function raised on request #{number}: {exc!r}")
                return JSONResponse(wire.error_body(500, message), status_code=500)
            if not isinstance(reply, Reply):
                message = self._fail(
                    f"scripted model: reply function returned {reply!r} for request #{number}"
                )
                return JSONResponse(wire.error_body(500, message), status_code=500)
        if reply.hang_before_headers or (reply.hang_after_chunks is not None and not request.stream):
            await self._hang(http_request)
            message = f"scripted model: hung request #{number} released"
            return JSONResponse(wire.error_body(503, message), status_code=503)
        if reply.raw_body is not None:
            return Response(reply.raw_body, status_code=reply.status, media_type="text/event-stream")
        if reply.status != 200:
            message = reply.text or f"scripted error {reply.status}"
            return JSONResponse(wire.error_body(reply.status, message), status_code=reply.status)
        if request.stream:
            events = wire.stream_events(reply, request)
            return StreamingResponse(
                self._stream(events, reply),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache"},
            )
        body_out = (
            wire.completion_body(reply, request) if api == "openai" else wire.message_body(reply, request)
        )
        return JSONResponse(body_out)

    async def _hang(self, http_request: Request) -> None:
        """Send nothing until the client hangs up, the server stops, or HANG_LIMIT passes."""
        server = self._server
        if server is None:  # stopping already
            return
        waits = {
            asyncio.ensure_future(server.exit_requested(HANG_LIMIT)),
            asyncio.ensure_future(_disconnected(http_request)),
        }
        try:
            await asyncio.wait(waits, timeout=HANG_LIMIT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)

    async def _stream(self, events: list[str], reply: Reply) -> AsyncIterator[str]:
        """The SSE events, `chunk_interval` apart, going silent after `hang_after_chunks`.

        Starlette cancels this when the client hangs up; a stop of the server ends it too."""
        server = self._server
        for index, event in enumerate(events):
            if index == reply.hang_after_chunks and reply.release is not None:
                if not await anyio.to_thread.run_sync(reply.release.wait, HANG_LIMIT):
                    return
            elif index == reply.hang_after_chunks:
                if server is not None:
                    await server.exit_requested(HANG_LIMIT)
                return
            if index and reply.chunk_interval > 0 and server is not None:
                if await server.exit_requested(reply.chunk_interval):
                    return
            yield event

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        """Listen on a free 127.0.0.1 port, serving from a background thread; return once listening."""
        if self._server is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        server = _Uvicorn(config)
        thread = threading.Thread(
            target=_serve, args=(server, sock), name=f"scripted-model-{port}", daemon=True
        )
        thread.start()
        if not server.listening.wait(START_TIMEOUT) or not server.started:
            server.request_exit()
            thread.join(STOP_TIMEOUT)
            sock.close()
            raise RuntimeError(f"scripted model server did not start on port {port}")
        self._server, self._thread, self._socket = server, thread, sock
        self.url = f"http://127.0.0.1:{port}"
        self.openai_base = f"{self.url}/v1"
        self.anthropic_base = self.url
        return self

    def stop(self) -> None:
        """Stop serving and wait (bounded) for the thread to end. Safe to call twice."""
        server, thread, sock = self._server, self._thread, self._socket
        self._server = self._thread = self._socket = None
        if server is None or thread is None:
            return
        server.request_exit()
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_TIMEOUT)
        if sock is not None:
            sock.close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedModelServer:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(self, *exc_info: object) -> None:
        await anyio.to_thread.run_sync(self.stop)


def _serve(server: _Uvicorn, sock: socket.socket) -> None:
    try:
        server.run(sockets=[sock])
    except BaseException:  # noqa: BLE001 - uvicorn exits with SystemExit on startup failure
        logger.exception("scripted model server stopped with an error")
    finally:
        server.listening.set()  # wake `start` even when startup failed


async def _disconnected(http_request: Request) -> None:
    """Return once the client hangs up (the body is read, so the next message says so)."""
    while (await http_request.receive())["type"] != "http.disconnect":
        pass


async def _json_body(request: Request) -> dict | None:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
