"""`overseer mcp --host-url URL`: a stdio client bridged to a running host's `/mcp`.

Every JSON-RPC message is passed through unchanged, both ways, so everything the host's
gateway does reaches the stdio client as if it were connected directly: progress, elicitation
(and its withdrawal), cancellation. The bridge only adds what HTTP needs and stdio lacks: the
credential, the session id (kept by the SDK's transport), and the routing headers a request
carries on HTTP (`MCP-Protocol-Version`, and for 2026-07-28 requests `Mcp-Method`/`Mcp-Name`).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as wire
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import MCP_DEFAULT_TIMEOUT, create_mcp_http_client
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp.shared.message import ClientMessageMetadata, SessionMessage

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 10.0


class BridgeError(Exception):
    """The host cannot be reached or refuses the credential; the text says what to do."""


def mcp_endpoint(host_url: str) -> str:
    """`http://host:port` (or `.../mcp`) -> the `/mcp` endpoint."""
    base = host_url.rstrip("/")
    return base if base.endswith("/mcp") else base + "/mcp"


async def check_host(host_url: str, token: str) -> None:
    """Fail fast, and clearly, before the client's first request would fail obscurely."""
    base = mcp_endpoint(host_url).removesuffix("/mcp")
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
            response = await client.get(f"{base}/api/me", headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        raise BridgeError(
            f"cannot reach the Overseer host at {base} ({exc}); is `overseer serve` running?"
        ) from exc
    if response.status_code == 401:
        raise BridgeError(
            f"the Overseer host at {base} refused the credential (401): "
            "set OVERSEER_TOKEN to its token or an API key"
        )
    if response.status_code >= 400:
        raise BridgeError(
            f"the Overseer host at {base} answered {response.status_code} to a credential check"
        )


class _Headers:
    """The per-message HTTP headers a stdio message needs on its way to the host."""

    def __init__(self) -> None:
        self.negotiated: str | None = None
        self._initialize_id: Any = None

    def stamp(self, message: SessionMessage) -> SessionMessage:
        inner = message.message
        headers: dict[str, str] = {}
        if isinstance(inner, wire.JSONRPCRequest | wire.JSONRPCNotification):
            params: dict[str, Any] = inner.params or {}
            meta = params.get("_meta")
            version = meta.get(wire.PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
            if isinstance(version, str) and inner.method != "initialize":
                # 2026-07-28: every request carries its own envelope, mirrored in headers.
                headers[MCP_PROTOCOL_VERSION_HEADER] = version
                headers[MCP_METHOD_HEADER] = inner.method
                key = NAME_BEARING_METHODS.get(inner.method)
                if key is not None and isinstance(params.get(key), str):
                    headers[MCP_NAME_HEADER] = encode_header_value(params[key])
                return SessionMessage(inner, metadata=ClientMessageMetadata(headers=headers))
            if inner.method == "initialize" and isinstance(inner, wire.JSONRPCRequest):
                self._initialize_id = inner.id
                return SessionMessage(inner)
        if self.negotiated:
            headers[MCP_PROTOCOL_VERSION_HEADER] = self.negotiated
        return SessionMessage(inner, metadata=ClientMessageMetadata(headers=headers) if headers else None)

    def observe(self, message: SessionMessage) -> None:
        """Learn the handshake's version from the host's answer to `initialize`."""
        inner = message.message
        if (
            isinstance(inner, wire.JSONRPCResponse)
            and self._initialize_id is not None
            and inner.id == self._initialize_id
        ):
            version = (inner.result or {}).get("protocolVersion")
            self.negotiated = version if isinstance(version, str) else None


async def bridge(host_url: str, token: str) -> None:
    """Pass messages between this process's stdio and the host's `/mcp` until either side closes."""
    await check_host(host_url, token)
    headers = _Headers()
    # No read timeout: a long agent run may keep a response stream quiet between progress notes.
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=None)
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
        stdio_server() as (from_client, to_client),
        streamable_http_client(mcp_endpoint(host_url), http_client=http) as (from_host, to_host),
    ):

        async def client_to_host() -> None:
            async with to_host:
                async for item in from_client:
                    if isinstance(item, Exception):
                        log.warning("dropped a message from the client that is not JSON-RPC: %s", item)
                        continue
                    await to_host.send(headers.stamp(item))

        async def host_to_client() -> None:
            async with to_client:
                async for item in from_host:
                    if isinstance(item, Exception):
                        log.warning("error from the host's MCP stream: %s", item)
                        continue
                    headers.observe(item)
                    await to_client.send(item)
            # The host's side is gone: nothing more can be answered.
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(host_to_client)
            await client_to_host()
