"""Who is calling a gateway tool, and whether their role allows it.

Over stdio the caller is whoever started `overseer mcp`: they own the data dir, so they are the
local admin. Over HTTP the `/mcp` mount authenticates each request (`http.py`) and hands the
principal to the SDK as an access token, which the SDK carries into the tool's context.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from backend.auth import ROLE_RANK, Principal, PrincipalKind, Role, local_principal

CallerOf = Callable[[Context], Principal | None]
"""How a transport names the caller of one request; None when nobody authenticated."""

LOCAL_ADMIN = local_principal()


def local_caller(_: Context) -> Principal:
    """stdio: the person who started the process."""
    return LOCAL_ADMIN


def access_token_for(principal: Principal, credential_digest: str) -> AccessToken:
    """The SDK's view of a principal: its role is the one scope; the client id names it."""
    return AccessToken(
        token=credential_digest,
        client_id=f"{principal.kind}:{principal.name}",
        scopes=[principal.role],
        subject=principal.name,
    )


def http_caller(_: Context) -> Principal | None:
    """HTTP: the principal the `/mcp` mount authenticated for this request."""
    token = get_access_token()
    if token is None or not token.scopes or token.scopes[0] not in ROLE_RANK:
        return None
    kind, _, name = token.client_id.partition(":")
    role: Role = token.scopes[0]  # type: ignore[assignment]  # checked against ROLE_RANK above
    known = kind in ("token", "user", "api_key")
    principal_kind: PrincipalKind = kind if known else "user"  # type: ignore[assignment]
    return Principal(name=name or token.client_id, role=role, kind=principal_kind)


def require(caller: CallerOf, ctx: Context, role: Role) -> Principal:
    """The caller, if they hold `role` (or above); a ToolError the client can read otherwise."""
    principal = caller(ctx)
    if principal is None:
        raise ToolError("not authenticated: connect with the host's token or an API key")
    if not principal.can(role):
        raise ToolError(f"this tool needs the {role} role; you are {principal.role}")
    return principal
