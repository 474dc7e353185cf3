"""A write the browser's cookie authenticates must come from this site's own pages.

The session cookie is SameSite=Strict, which keeps it off requests from other sites, but not
off requests from another origin of the same site (another port of this host, a sibling
subdomain): a page there could POST `/api/sessions/{id}/stop` as `text/plain`, a request no
CORS preflight guards, and the browser would attach the cookie. So a write (POST, PUT, PATCH,
DELETE) to `/api/` whose credential is the cookie needs an `Origin` that is this server's own
(the Host it was asked for) or one of `cors_origins`; browsers send `Origin` on every such
request. Without `Origin`, `Sec-Fetch-Site: same-origin` will do. A bearer token or an API key
in a header is not ambient (a page cannot make a browser send it), so those callers are not
checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.api.auth_first import needs_credential
from backend.api.deps import COOKIE_NAME
from backend.api.early_answer import answer_early

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def checked(method: str, path: str) -> bool:
    """A write to an `/api/` route that needs a credential (login needs none: a cookie adds nothing)."""
    return method in WRITE_METHODS and needs_credential(method, path)


def cookie_is_the_credential(request: Request) -> bool:
    """True when `credential_of` would use the session cookie (no header credential came first)."""
    if request.headers.get("authorization", "").lower().startswith("bearer ") or request.headers.get("x-api-key"):
        return False
    return bool(request.cookies.get(COOKIE_NAME))


def from_this_site(request: Request, allowed: Iterable[str]) -> bool:
    """The request's `Origin` is this server's own or a configured one (else same-origin fetch metadata)."""
    origin = request.headers.get("origin")
    if origin is None:
        return request.headers.get("sec-fetch-site") == "same-origin"
    if origin in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc == request.headers.get("host")


class OriginCheck:
    """ASGI middleware: 403 for a cookie-authenticated write to `/api/` from another origin."""

    def __init__(self, app: ASGIApp, *, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and checked(scope["method"], scope["path"]):
            request = Request(scope)
            if cookie_is_the_credential(request) and not from_this_site(request, self.allowed):
                shown = request.headers.get("origin", "none")
                await answer_early(
                    scope,
                    send,
                    403,
                    f"a write signed in by cookie must come from this server's pages (Origin: {shown}); "
                    "other clients send a bearer token or an API key",
                )
                return
        await self.app(scope, receive, send)
