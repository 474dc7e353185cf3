"""Signing in to remote MCP servers from the dashboard (issue 15, OAuth).

`POST /api/servers/{name}/login` (admins) starts the sign-in and answers with the authorization
URL for the browser to open; the authorization server sends the browser back to
`GET /oauth/callback`, which completes it (code exchange, tokens into the vault) and has the pool
reconnect the server. The callback needs no Overseer credential: the OAuth `state` it brings
back, unguessable and known only to the sign-in that made it, is what it is checked against.
No answer of these routes carries a token, a code or a client secret.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from backend.api.deps import Admin, SignInsDep, Viewer
from backend.app.server_sign_ins import SignInState
from backend.mcp.oauth_login import CALLBACK_PATH, AuthorizationResponse, SignInFailed
from backend.mcp.oauth_loopback import result_page

router = APIRouter(tags=["servers"])

ServerName = Path(min_length=1, max_length=40)


class SignInStarted(BaseModel):
    """Where to send the person: the authorization server's page for this sign-in."""

    server: str
    authorization_url: str


@router.post("/api/servers/{name}/login")
async def begin_sign_in(request: Request, _: Admin, sign_ins: SignInsDep, name: str = ServerName) -> SignInStarted:
    """Start signing in to a remote server; open `authorization_url` in a browser to finish."""
    redirect_uri = str(request.base_url).rstrip("/") + CALLBACK_PATH
    try:
        url = await sign_ins.begin(name, redirect_uri=redirect_uri)
    except SignInFailed as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, f"cannot sign in to {name!r}: {exc}") from None
    return SignInStarted(server=name, authorization_url=url)


@router.get("/api/servers/{name}/sign-in")
async def sign_in_state(_: Viewer, sign_ins: SignInsDep, name: str = ServerName) -> SignInState:
    """Where a server's sign-in stands (never the tokens themselves)."""
    return sign_ins.state(name)


@router.get(CALLBACK_PATH, include_in_schema=False, response_class=HTMLResponse)
async def sign_in_callback(
    sign_ins: SignInsDep,
    code: str | None = Query(None, max_length=4096),
    state: str | None = Query(None, max_length=1024),
    iss: str | None = Query(None, max_length=2048),
    error: str | None = Query(None, max_length=200),
    error_description: str | None = Query(None, max_length=1000),
) -> HTMLResponse:
    """Where the authorization server sends the browser back: completes the sign-in it belongs to."""
    answer = AuthorizationResponse(code=code, state=state, iss=iss, error=error, error_description=error_description)
    try:
        name = await sign_ins.finish(answer)
    except SignInFailed as exc:
        return result_page("Sign-in failed", str(exc), status.HTTP_400_BAD_REQUEST)
    return result_page(f"Signed in to {name}", "Overseer is connecting the server. You can close this tab.")
