"""Uvicorn, told about Overseer's shutdown before it closes a single connection.

When uvicorn shuts down it first closes client connections, and an MCP client whose connection
closes cancels its calls (or ends its MCP session), which looks exactly like a person cancelling
an `invoke_agent` call: that would stop the session and cancel its pending approval. A shutdown
must never end an approval, so the host hears "shutting down" first, and from then on every
cancellation leaves runs and approvals as stored, for the next start to recover.
"""

from __future__ import annotations

import socket

import uvicorn


class OverseerServer(uvicorn.Server):
    """`uvicorn.Server` whose shutdown begins with the host's."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        host = getattr(getattr(self.config.app, "state", None), "host", None)
        if host is not None:
            host.begin_shutdown()
        await super().shutdown(sockets)
