"""Signing in to remote MCP servers from the dashboard (issue 15, OAuth).

`POST /api/servers/{name}/login` (admins) starts the sign-in and answers with the authorization
URL for the browser to open; the authorization server sends the browser back to
`GET /oauth/callback`, which completes it (code exchange, tokens into the vault) and has the pool
reconnect the server. The callback needs no Overseer credential: the OAuth `state` it brings
back, unguessable and known only to the sign-in that made it, is what it is checked against.
No answer of these routes carries a token, a code or a client secret.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from backend.api.deps import Admin, HostDep, Viewer
from backend.app.host import Host
from backend.domain.errors import Conflict, NotFound
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import CALLBACK_PATH, AuthorizationResponse, SignIns, SignInFailed
from backend.mcp.oauth_loopback import result_page

router = APIRouter(tags=["servers"])

ServerName = Path(min_length=1, max_length=40)


class SignInStarted(BaseModel):
    """Where to send the person: the authorization server's page for this sign-in."""

    server: str
    authorization_url: str


class SignInState(BaseModel):
    """Whether a server signs in with OAuth, and where its sign-in stands."""

    server: str
    oauth: bool
    """The server is remote without an Authorization header: a 401 from it asks for a sign-in."""
    signed_in: bool
    """A sign-in is stored (whether or not the server still accepts it)."""
    needs_sign_in: bool
    """The server refused every token we have: its tools wait for a sign-in."""
    pending: bool
    """A sign-in begun here waits for the browser to come back."""
    state: str
    error: str | None


def sign_ins(request: Request, host: HostDep) -> SignIns:
    """This app's sign-ins in progress, created on first use and closed with the host."""
    found: SignIns | None = getattr(request.app.state, "oauth_sign_ins", None)
    if found is None:
        pool = host.pool

        async def reconnect(name: str) -> None:
            if pool.config_of(name) is not None:
                await pool.restart_server(name, reason="signed in")

        found = request.app.state.oauth_sign_ins = SignIns(pool.oauth, on_signed_in=reconnect)
        host.services.append(found)  # the host abandons waiting sign-ins when it stops
    return found


SignInsDep = Annotated[SignIns, Depends(sign_ins)]


def _oauth_config(host: Host, name: str) -> McpServerConfig:
    config = host.pool.config_of(name)
    if config is None:
        raise NotFound(f"no running MCP server named {name!r}")
    if not config.signs_in_with_oauth:
        why = "it sends its own Authorization header" if config.is_remote else "it is not a remote server"
        raise Conflict(f"MCP server {name!r} does not sign in with OAuth: {why}")
    return config


@router.post("/api/servers/{name}/login")
async def begin_sign_in(
    request: Request, _: Admin, host: HostDep, flows: SignInsDep, name: str = ServerName
) -> SignInStarted:
    """Start signing in to a remote server; open `authorization_url` in a browser to finish."""
    config = _oauth_config(host, name)
    redirect_uri = str(request.base_url).rstrip("/") + CALLBACK_PATH
    try:
        url = await flows.begin(name, config, redirect_uri=redirect_uri)
    except SignInFailed as exc:
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, f"cannot sign in to {name!r}: {exc}") from None
    return SignInStarted(server=name, authorization_url=url)


@router.get("/api/servers/{name}/sign-in")
async def sign_in_state(_: Viewer, host: HostDep, flows: SignInsDep, name: str = ServerName) -> SignInState:
    """Where a server's sign-in stands (never the tokens themselves)."""
    config = host.pool.config_of(name)
    found = next((s for s in host.pool.statuses() if s.name == name), None)
    if config is None or found is None:
        raise NotFound(f"no running MCP server named {name!r}")
    return SignInState(
        server=name,
        oauth=config.signs_in_with_oauth,
        signed_in=config.signs_in_with_oauth and host.pool.oauth.has_tokens(name),
        needs_sign_in=found.needs_sign_in,
        pending=flows.pending(name),
        state=found.state,
        error=found.error,
    )


@router.get(CALLBACK_PATH, include_in_schema=False, response_class=HTMLResponse)
async def sign_in_callback(
    flows: SignInsDep,
    code: str | None = Query(None, max_length=4096),
    state: str | None = Query(None, max_length=1024),
    iss: str | None = Query(None, max_length=2048),
    error: str | None = Query(None, max_length=200),
    error_description: str | None = Query(None, max_length=1000),
) -> HTMLResponse:
    """Where the authorization server sends the browser back: completes the sign-in it belongs to."""
    answer = AuthorizationResponse(code=code, state=state, iss=iss, error=error, error_description=error_description)
    try:
        name = await flows.finish(answer)
    except SignInFailed as exc:
        return result_page("Sign-in failed", str(exc), status.HTTP_400_BAD_REQUEST)
    return result_page(f"Signed in to {name}", "Overseer is connecting the server. You can close this tab.")
