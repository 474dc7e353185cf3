"""Uvicorn, told about Overseer's shutdown the moment it is asked to exit.

A client whose stream ends mid-call gives up: it cancels its calls or deletes its MCP session,
which looks exactly like a person cancelling an `invoke_agent` call and would stop the session
and cancel its pending approval. Streams end early in a shutdown: sse-starlette (under the MCP
transport) ends every open SSE stream as soon as it sees uvicorn's `should_exit`, before uvicorn
even calls `shutdown()`. A shutdown must never end an approval, so the host hears "shutting down"
when `should_exit` is set, and from then on every cancellation leaves runs and approvals as
stored, for the next start to recover.
"""

from __future__ import annotations

import logging
import socket

import uvicorn

from backend.domain.redact import redact

UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")


class OverseerServer(uvicorn.Server):
    """`uvicorn.Server` whose exit, however it is asked for, begins with the host's shutdown."""

    _should_exit = False

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        for name in UVICORN_LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(f, RedactingFilter) for f in logger.filters):
                logger.addFilter(RedactingFilter())

    @property  # type: ignore[override]  # uvicorn's attribute, made to tell the host when it turns true
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        if value:
            self._begin_host_shutdown()
        self._should_exit = value

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._begin_host_shutdown()  # a shutdown that did not go through should_exit
        await super().shutdown(sockets)

    def _begin_host_shutdown(self) -> None:
        services = getattr(getattr(self.config.app, "state", None), "services", None)
        if services is not None:
            services.lifecycle.begin_shutdown()


class RedactingFilter(logging.Filter):
    """Strips credentials from uvicorn's lines: its WebSocket line carries the `?token=` URL."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
