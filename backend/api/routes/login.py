"""Health, login and logout: the routes that work without a credential (and `me`)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import anyio
from fastapi import APIRouter, HTTPException, Request, Response, status
from fastapi.responses import RedirectResponse

from backend.auth import AuthError, Principal
from backend.api.deps import COOKIE_NAME, AuthDep, Viewer, credential_of
from backend.api.schemas import LoginRequest, TokenResponse
from backend.api.throttle import LoginThrottle, LoginThrottled

router = APIRouter(tags=["auth"])


def _installed_version() -> str:
    """The installed distribution's version (pyproject.toml's `[project] version`)."""
    try:
        return version("overseer")
    except PackageNotFoundError:  # a source tree that was never installed
        return "source"


VERSION = _installed_version()


@router.get("/api/health")
async def health(request: Request, auth: AuthDep) -> dict[str, object]:
    """`ok` and how to sign in to anyone; a caller with a credential also reads the version,
    servers and sandbox.

    `sign_in` is what the login page asks for: `token` (single-user: the access token alone, no
    username) or `password` (multi-user: a username and password). Without a credential it says
    no more: server names and states, the version and the sandbox tell an attacker what runs here.
    """
    services = request.app.state.services
    sign_in = "password" if auth.multi_user else "token"
    if auth.authenticate(credential_of(request)) is None:
        return {"status": "ok", "sign_in": sign_in}
    return {
        "status": "ok",
        "sign_in": sign_in,
        "version": VERSION,
        "host_id": services.settings.host_id,
        "servers": services.servers.states(),
        "sandbox": services.sandbox.health(),
    }


def _set_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        max_age=24 * 3600,
        path="/",
    )


@router.post("/api/auth/login")
async def login(body: LoginRequest, request: Request, response: Response, auth: AuthDep) -> TokenResponse:
    """Username and password (single-user: the password is the token) for a 24 h token and cookie."""
    throttle: LoginThrottle = request.app.state.login_throttle
    client = request.client.host if request.client else "unknown"
    try:
        throttle.check(client, body.username)
    except LoginThrottled as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS, str(exc), headers={"Retry-After": str(exc.retry_after)}
        ) from exc
    try:
        # argon2 is deliberately slow: keep it off the event loop.
        token = await anyio.to_thread.run_sync(auth.login, body.username, body.password)
    except AuthError as exc:
        throttle.failed(client, body.username)
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, str(exc)) from exc
    throttle.succeeded(client)
    _set_cookie(response, request, token)
    return TokenResponse(token=token)


@router.get("/login", include_in_schema=False)
async def login_link(request: Request, auth: AuthDep, token: str = "") -> Response:
    """The link `overseer serve` prints: trade the token for a cookie and open the dashboard."""
    principal = auth.authenticate(token)
    if principal is None:
        return RedirectResponse("/?login=failed", status_code=status.HTTP_303_SEE_OTHER)
    response = RedirectResponse("/", status_code=status.HTTP_303_SEE_OTHER)
    _set_cookie(response, request, auth.issue_jwt(principal))
    return response


@router.post("/api/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
async def logout(_: Viewer, request: Request, auth: AuthDep) -> Response:
    """Sign out: the JWT that made this request (cookie or bearer) is refused from now on.

    The single-user token and API keys are not login sessions: they stay valid (revoke a key
    with `overseer api-key revoke NAME`).
    """
    credential = credential_of(request)
    if credential is not None:
        auth.revoke_jwt(credential)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(COOKIE_NAME, path="/")
    return response


@router.get("/api/me")
async def me(principal: Viewer) -> dict[str, str]:
    return {"name": principal.name, "role": principal.role, "kind": principal.kind}


__all__ = ["Principal", "router"]
