"""A remote server that answers a plain 403: refused, without asking for a sign-in or for more scope.

A 401 asks for a sign-in (backend/mcp/oauth_client.py) and a 403 `insufficient_scope` for more
scope (backend/mcp/oauth_step_up.py). A 403 with neither says the server knows who is asking
and will not let them do this, often after it took `initialize` and even a listing. The SDK
turns it into "Server returned an error response", and a person who reads that tends to sign in
again, to be told the server did not ask for a sign-in. So the refusal is said as it is: the
request the server refused, with HTTP 403, what it said (its `error_description`, its JSON
error, a line of its text), and whether signing in again could help:

- a token from a sign-in was sent: only as an account the server lets in;
- no credentials were sent: no, it did not ask for a sign-in (a 401 would have);
- the config's own Authorization header was sent: signing in does not apply, those credentials are refused.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import httpx2
from mcp.client.auth.utils import extract_field_from_www_auth

FORBIDDEN = -32003
"""The JSON-RPC code of the error a plain 403 becomes, when the server's answer names none."""
_SAID_CHARS = 300
"""How much of what the server said is quoted."""
_BODY_BYTES = 8192
"""How much of a 403's body is read: enough for any message, never a large page."""

Credentials = Literal["token", "none", "headers"]
"""What the refused request carried: an OAuth token of ours, no credentials, the config's own Authorization header."""


async def forbidden(
    request: httpx2.Request, response: httpx2.Response, *, sign_in_hint: str | None
) -> tuple[httpx2.Response, str]:
    """A plain 403 to `request` as the caller gets it, and its message (for the status page too).

    `sign_in_hint` is how to sign in to the server, None if Overseer does not sign in to it.
    """
    body = await read_refusal(response)
    said, code = what_it_said(response, body)
    credentials: Credentials = "none"
    if "authorization" in request.headers:
        credentials = "token" if sign_in_hint is not None else "headers"
    message = refusal_message(request_method(request)[1], said, credentials=credentials, hint=sign_in_hint or "")
    return refusal_response(request, response, code=code or FORBIDDEN, message=message, body=body), message


async def read_refusal(response: httpx2.Response) -> bytes:
    """The start of a refusal's body (the rest is dropped); the response is closed."""
    body = b""
    try:
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) >= _BODY_BYTES:
                break
    except httpx2.HTTPError:
        pass  # what arrived is what the server said
    finally:
        await response.aclose()
    return body[:_BODY_BYTES]


def what_it_said(response: httpx2.Response, body: bytes) -> tuple[str | None, int | None]:
    """What the server said with its refusal (None: nothing readable), and its JSON-RPC error code if it sent one."""
    said = extract_field_from_www_auth(response, "error_description")
    code: int | None = None
    found = _json(body)
    if isinstance(found, dict):
        error = found.get("error")
        if isinstance(error, dict):  # a JSON-RPC error
            code = error.get("code") if isinstance(error.get("code"), int) else None
            said = said or _text(error.get("message"))
        else:  # an OAuth-style or ad hoc JSON error
            said = said or _text(found.get("error_description")) or _text(found.get("message")) or _text(error)
    elif found is None and not _is_html(response):
        said = said or _text(body.decode(errors="replace").strip().splitlines()[0] if body.strip() else None)
    return said, code


def refusal_message(method: str | None, said: str | None, *, credentials: Credentials, hint: str) -> str:
    """What the refused call (or connection) reports: the refusal, what the server said, what would help."""
    what = f"refused {method}" if method else "refused the request"
    quoted = f": '{said}'" if said else " without saying why"
    if credentials == "token":
        helps = (
            "it asked for no sign-in and no more scope, so the account signed in is not allowed this; "
            f"signing in again helps only as an account the server lets in ({hint})"
        )
    elif credentials == "none":
        helps = "it did not ask for a sign-in (that is a 401), so signing in will not help; its owner decides who may use it"
    else:
        helps = "Overseer does not sign in to it (its configured Authorization header is sent): those credentials are not allowed this"
    return f"the server {what} with HTTP 403 (forbidden){quoted}; {helps}"


def request_method(request: httpx2.Request) -> tuple[Any, str | None]:
    """The JSON-RPC id and method of a request (None, None for anything else)."""
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None, None
    if not isinstance(message, dict):
        return None, None
    method = message.get("method")
    return message.get("id"), method if isinstance(method, str) else None


def refusal_response(
    request: httpx2.Request, response: httpx2.Response, *, code: int, message: str, body: bytes = b""
) -> httpx2.Response:
    """The refusal as a JSON-RPC error for the refused request, which the SDK hands to its caller as is.

    A notification or a stream (no id: nobody to tell) gets the refusal back as it came.
    """
    request_id, _ = request_method(request)
    headers = {k: v for k, v in response.headers.items() if k.lower() in ("www-authenticate", "mcp-session-id")}
    if request_id is None:
        return httpx2.Response(response.status_code, headers=headers, content=body, request=request)
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return httpx2.Response(
        response.status_code, headers=headers, json=error, request=request, extensions=response.extensions
    )


def _json(body: bytes) -> object:
    try:
        return json.loads(body) if body.strip() else None
    except ValueError:
        return None


def _text(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(value.split())
    return value if len(value) <= _SAID_CHARS else value[: _SAID_CHARS - 3] + "..."


def _is_html(response: httpx2.Response) -> bool:
    return "html" in response.headers.get("content-type", "").lower()
