"""OverseerServer: the host hears of a shutdown before any stream or connection closes."""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass
from types import SimpleNamespace

import uvicorn
from sse_starlette.sse import AppStatus  # patches uvicorn's exit handler, as it does under the MCP transport

from backend.api.server import OverseerServer


@dataclass
class RecordingHost:
    told: int = 0

    def begin_shutdown(self) -> None:
        self.told += 1


def server_with(host: RecordingHost) -> OverseerServer:
    app = SimpleNamespace(state=SimpleNamespace(services=SimpleNamespace(lifecycle=host)))
    return OverseerServer(uvicorn.Config(app))  # type: ignore[arg-type]


def test_a_new_server_has_not_told_the_host_anything():
    host = RecordingHost()
    server = server_with(host)
    assert server.should_exit is False
    assert host.told == 0


def test_asking_the_server_to_exit_tells_the_host_at_once():
    # sse-starlette ends every SSE stream when it sees should_exit, before uvicorn's shutdown():
    # the host must already know, or a client giving up on its stream reads as a person cancelling.
    host = RecordingHost()
    server = server_with(host)
    server.should_exit = True
    assert host.told == 1
    assert server.should_exit is True


def test_a_signal_tells_the_host_before_the_server_sees_it(monkeypatch):
    # sse-starlette's handler also sets its process-wide flag, which would end every later SSE
    # stream in this process; monkeypatch puts it back after the test.
    monkeypatch.setattr(AppStatus, "should_exit", False)
    host = RecordingHost()
    server = server_with(host)
    server.handle_exit(signal.SIGTERM, None)
    assert host.told == 1
    assert server.should_exit is True
    assert AppStatus.should_exit is True  # the patched handler ran, as it does in `overseer serve`


def test_an_app_without_a_host_still_exits():
    server = OverseerServer(uvicorn.Config(SimpleNamespace()))  # type: ignore[arg-type]
    server.should_exit = True
    assert server.should_exit is True


def test_uvicorns_websocket_line_never_carries_the_token(caplog):
    # uvicorn logs `"WebSocket /ws?token=..." [accepted]` at info level (issue 13, item 15).
    server_with(RecordingHost())
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(caplog.handler)  # uvicorn's loggers do not propagate to the root
    try:
        with caplog.at_level(logging.INFO, logger="uvicorn.error"):
            logger.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:50000", "/ws?token=Zx9_abcDEF123")
    finally:
        logger.removeHandler(caplog.handler)
    [record] = [r for r in caplog.records if "WebSocket" in r.getMessage()]
    # Another library's filter may have struck it first (litellm installs its own): either way
    # the line goes on without the credential.
    assert "Zx9_abcDEF123" not in record.getMessage()
    assert "WebSocket /ws?" in record.getMessage()
