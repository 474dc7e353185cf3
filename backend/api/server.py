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

import socket

import uvicorn


class OverseerServer(uvicorn.Server):
    """`uvicorn.Server` whose exit, however it is asked for, begins with the host's shutdown."""

    _should_exit = False

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
        host = getattr(getattr(self.config.app, "state", None), "host", None)
        if host is not None:
            host.begin_shutdown()
