"""The gateway over streamable HTTP at `/mcp` on the web app, behind the API's credentials.

Every request needs the bearer token, a login JWT or an API key, in a header (`Authorization:
Bearer ...` or `X-API-Key`); cookies and `?token=` are not accepted here, so a web page cannot
ride a logged-in browser into it. Without one the answer is 401. The principal reaches the
tools as the SDK's access token (its role is the one scope), and the SDK binds each MCP session
to the credential that opened it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.app.services import AppServices
from backend.auth import Authenticator, is_loopback
from backend.gateway.callers import access_token_for, http_caller
from backend.gateway.server import Gateway, build_server

MCP_PATH = "/mcp"
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


REALM = "overseer"
HOW_TO_AUTHENTICATE = (
    "authentication required: send `Authorization: Bearer <credential>` (or `X-API-Key`) with the host's"
    " token, a login token or an API key from `overseer api-key create NAME`; this endpoint offers no OAuth sign-in"
)


def challenge(credential: str | None) -> bytes:
    """The `WWW-Authenticate` value of a 401 (RFC 6750): a bearer credential in the `overseer` realm.

    No `resource_metadata`: Overseer serves no protected-resource metadata, and pointing a client at
    it would send it looking for an authorization server that does not exist. A request that sent
    no credential gets no error code (RFC 6750 §3.1); one that sent a wrong one is `invalid_token`.
    """
    value = f'Bearer realm="{REALM}"'
    if credential is not None:
        value += ', error="invalid_token", error_description="the credential is not valid here"'
    return value.encode()


def credential_in(scope: Scope) -> str | None:
    """The bearer token or API key from the request headers; nothing else counts here."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return headers.get("x-api-key", "").strip() or None


async def _respond(
    send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GatewayHttp:
    """The ASGI app served at `/mcp`: authenticate, then the SDK's streamable HTTP transport."""

    def __init__(
        self, services: AppServices, auth: Authenticator, *, bind_host: str, expose_tools: bool = False
    ) -> None:
        self.gateway = Gateway(services, caller=http_caller, expose_tools=expose_tools)
        self.auth = auth
        self.server = build_server(self.gateway)
        # DNS-rebinding protection where it can be exact: a loopback bind knows its host names.
        security = (
            TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=LOOPBACK_HOSTS,
                allowed_origins=LOOPBACK_ORIGINS,
            )
            if is_loopback(bind_host)
            else TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        inner = self.server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
        self._app: ASGIApp = AuthContextMiddleware(inner)
        self.running = False

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve MCP sessions for the app's lifetime (inside its lifespan)."""
        async with self.server.session_manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False
                # Shutting down is not a client cancelling: runs stay for recovery.
                self.gateway.closing = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        credential = credential_in(scope)
        principal = self.auth.authenticate(credential)
        if principal is None or credential is None:
            await _respond(send, 401, HOW_TO_AUTHENTICATE, [(b"www-authenticate", challenge(credential))])
            return
        if not self.running:
            await _respond(send, 503, "the MCP endpoint runs only under `overseer serve`")
            return
        digest = hashlib.sha256(credential.encode("utf-8", "surrogatepass")).hexdigest()
        scope["user"] = AuthenticatedUser(access_token_for(principal, digest))
        await self._app(scope, receive, send)


def mcp_route(gateway_http: GatewayHttp) -> Route:
    """`/mcp` exactly (no redirect to `/mcp/`), every method the transport uses."""
    return Route(MCP_PATH, endpoint=gateway_http, methods=["GET", "POST", "DELETE"])
