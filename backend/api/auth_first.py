"""The credential is checked before any body is read; a caller without one may send only a little.

FastAPI reads and parses a route's JSON body before it runs the route's dependencies, the
credential check among them: a 90 MiB `[{},...]` sent with no token took the process from 284 MB
to 2.57 GB and stalled the event loop for seconds. So this middleware looks at the credential
(header, cookie or `?token=`, as `credential_of` reads them) while only the headers have arrived:

- an `/api/` request without a valid credential is answered 401 at once, its body never read,
  unless its path is public (health, login);
- any other request without one (login, the signed answer links, OAuth callbacks, `/mcp`, whose
  transport answers 401 itself, the dashboard's files) may send at most `UNAUTHENTICATED_CAP`
  bytes, what a login needs;
- a request with a valid credential goes on to the route's own cap (body_limit.py).

A CORS preflight (OPTIONS) carries no credential by design and is never refused here.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.api.body_limit import KIB, serve_capped
from backend.api.deps import credential_of
from backend.api.early_answer import answer_early
from backend.auth import Authenticator

UNAUTHENTICATED_CAP = 64 * KIB
"""The most a request without a credential may send: a name and a password, a signed link's form."""

PUBLIC_API_PATHS = frozenset({"/api/health", "/api/auth/login"})
"""The `/api/` paths that work without a credential; every other one needs one before its body is read."""


def needs_credential(method: str, path: str) -> bool:
    """True for requests refused without a credential before their body is read."""
    return path.startswith("/api/") and path not in PUBLIC_API_PATHS and method != "OPTIONS"


class AuthFirst:
    """ASGI middleware: 401 before the body for an `/api/` request without a valid credential."""

    def __init__(self, app: ASGIApp, *, auth: Authenticator) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.auth.authenticate(credential_of(Request(scope))) is not None:
            await self.app(scope, receive, send)
        elif needs_credential(scope["method"], scope["path"]):
            await answer_early(scope, send, 401, "authentication required", [(b"www-authenticate", b"Bearer")])
        else:
            await serve_capped(self.app, scope, receive, send, UNAUTHENTICATED_CAP)
