"""A remote server that wants more scope for one request (SEP-835 step-up), as the pool meets it.

The server answers 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`.
Asking for more scope takes a person (a new authorization), and the pool has none at hand, so it
never signs in by itself: the refused call fails with a message that says which scope is missing
and how to sign in again, and the scopes to ask for (what was granted plus what the server
named, SEP-2350's union) are kept in the vault, where the next sign-in finds them. That bounds
the retries at one per person's sign-in. Once a sign-in has asked for them and the server still
refuses, the message says that signing in again will not help.

The connection stays up: the server's other tools work with the scope already granted.
"""

from __future__ import annotations

import logging

import anyio
import httpx2
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes

from backend.mcp.oauth_refusal import refusal_response
from backend.mcp.oauth_store import OAuthVault

logger = logging.getLogger(__name__)

INSUFFICIENT_SCOPE = -32001
"""The JSON-RPC code of the error a step-up refusal becomes (a server-defined code)."""


def challenged_scope(response: httpx2.Response) -> str | None:
    """The scope a 403 step-up challenge asks for ("" when it names none); None for any other answer."""
    if response.status_code != 403 or extract_field_from_www_auth(response, "error") != "insufficient_scope":
        return None
    return extract_field_from_www_auth(response, "scope") or ""


def _scopes(scope: str | None) -> set[str]:
    return set((scope or "").split())


async def note_step_up(vault: OAuthVault, name: str, challenged: str, *, hint: str) -> str:
    """Remember the scopes the next sign-in to `name` asks for; what the refused call reports."""

    def update() -> str:
        stored = vault.read(name)
        granted = stored.tokens.scope if stored.tokens is not None else None
        wanted = union_scopes(union_scopes(granted, stored.step_up_scope), challenged or None)
        missing = " ".join(sorted(_scopes(challenged) - _scopes(granted)))
        if challenged and stored.requested_scope is not None and _scopes(challenged) <= _scopes(stored.requested_scope):
            # A sign-in already asked for all of it: another would end the same way.
            held = f"got only '{granted}'" if missing else f"got all of it ('{granted}')"
            return (
                f"still refused for want of scope '{challenged}', which the last sign-in asked for and "
                f"{held}; signing in again will not help: the authorization server does not grant it to "
                "this account, or the server wants what no sign-in gives"
            )
        vault.write(name, stored.model_copy(update={"step_up_scope": wanted}))
        needed = f"scope {missing}" if missing else f"scope '{challenged}'" if challenged else "more scope"
        return f"needs more permission for this request ({needed}); {hint}, which asks for '{wanted}'"

    message = await anyio.to_thread.run_sync(update)
    logger.info("MCP server %r refused a request for want of scope: %s", name, message)
    return message


def step_up_refusal(request: httpx2.Request, response: httpx2.Response, message: str) -> httpx2.Response:
    """The 403 as a JSON-RPC error for the refused request, which the SDK hands to its caller as is."""
    return refusal_response(request, response, code=INSUFFICIENT_SCOPE, message=message)
