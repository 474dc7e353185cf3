"""Shared FastAPI dependencies: the host, the caller, and role checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, WebSocket, status

from backend.auth import Authenticator, Principal, Role
from backend.app.host import Host

COOKIE_NAME = "overseer_session"

MAX_STORED_INT = 2**63 - 1
"""The largest integer the store can compare with (SQLite's and Postgres' BIGINT): every integer a
client sends (offsets, seq numbers) is bounded by it, or the driver raises OverflowError, a 500."""


def get_host(request: Request) -> Host:
    return request.app.state.host


def get_auth(request: Request) -> Authenticator:
    return request.app.state.auth


def credential_of(request: Request | WebSocket) -> str | None:
    """Bearer header, then the session cookie, then `?token=` (WebSockets cannot set headers)."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    api_key = request.headers.get("x-api-key")
    if api_key:
        return api_key.strip()
    return request.cookies.get(COOKIE_NAME) or request.query_params.get("token")


def current_principal(request: Request, auth: Annotated[Authenticator, Depends(get_auth)]) -> Principal:
    principal = auth.authenticate(credential_of(request))
    if principal is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "authentication required", headers={"WWW-Authenticate": "Bearer"}
        )
    return principal


def require(role: Role):  # noqa: ANN201 - returns a dependency
    """A dependency that lets through callers with at least `role`."""

    def check(principal: Annotated[Principal, Depends(current_principal)]) -> Principal:
        if not principal.can(role):
            raise HTTPException(status.HTTP_403_FORBIDDEN, f"this needs the {role} role; you are {principal.role}")
        return principal

    return check


HostDep = Annotated[Host, Depends(get_host)]
AuthDep = Annotated[Authenticator, Depends(get_auth)]
Viewer = Annotated[Principal, Depends(require("viewer"))]
Approver = Annotated[Principal, Depends(require("approver"))]
Admin = Annotated[Principal, Depends(require("admin"))]
