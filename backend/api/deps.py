"""Shared FastAPI dependencies: the app's services, the caller, and role checks.

A route names the service it uses (`sessions: Sessions`); none sees the Host, so the store, the
pool and the runner are reached only through the app layer (backend/app/services.py).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, WebSocket, status

from backend.app.approvals import ApprovalService
from backend.app.policy import PolicyService
from backend.app.server_sign_ins import ServerSignIns
from backend.app.servers_admin import ServerAdmin
from backend.app.services import AppServices
from backend.app.sessions import SessionService
from backend.auth import Authenticator, Principal, Role

COOKIE_NAME = "overseer_session"

MAX_STORED_INT = 2**63 - 1
"""The largest integer the store can compare with (SQLite's and Postgres' BIGINT): every integer a
client sends (offsets, seq numbers) is bounded by it, or the driver raises OverflowError, a 500."""


def get_services(request: Request) -> AppServices:
    return request.app.state.services


def _sessions(services: Services) -> SessionService:
    return services.sessions


def _approvals(services: Services) -> ApprovalService:
    return services.approvals


def _servers(services: Services) -> ServerAdmin:
    return services.servers


def _policies(services: Services) -> PolicyService:
    return services.policies


def _sign_ins(services: Services) -> ServerSignIns:
    return services.sign_ins


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


Services = Annotated[AppServices, Depends(get_services)]
Sessions = Annotated[SessionService, Depends(_sessions)]
Approvals = Annotated[ApprovalService, Depends(_approvals)]
Servers = Annotated[ServerAdmin, Depends(_servers)]
Policies = Annotated[PolicyService, Depends(_policies)]
SignInsDep = Annotated[ServerSignIns, Depends(_sign_ins)]
AuthDep = Annotated[Authenticator, Depends(get_auth)]
Viewer = Annotated[Principal, Depends(require("viewer"))]
Approver = Annotated[Principal, Depends(require("approver"))]
Admin = Annotated[Principal, Depends(require("admin"))]
