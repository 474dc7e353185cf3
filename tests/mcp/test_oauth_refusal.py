"""A remote MCP server that refuses with a plain 403 (backend/mcp/oauth_refusal.py): no sign-in asked
for, no scope named. The person reads what the server said and whether signing in again could help,
instead of "Server returned an error response" and a sign-in that the server never asked for. Loopback
servers of tests/mcp/fixtures/ (oauth_server.py, bent by oauth_gates.py and oauth_refusals.py); no
sleeps: every wait is on an event, bounded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import AuthorizationResponse, SignIns, SignInFailed
from backend.mcp.oauth_refusal import what_it_said
from backend.mcp.server import ServerRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from oauth_gates import OpenHandshake, regional_app, wrap_mcp  # noqa: E402
from oauth_refusals import Forbids  # noqa: E402
from oauth_server import OAuthServers, _App, free_port, give_consent  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion
REDIRECT = "http://127.0.0.1:8000/oauth/callback"
ADMINS_ONLY = json.dumps({"error": "forbidden", "error_description": "whoami is for admins only"}).encode()
NOT_SHARED = b"This workspace is not shared with you.\n"


async def until(pool: McpPool, condition: Callable[[ServerRunner], bool]) -> None:
    """Wait (bounded) until the docs server's runner satisfies `condition`."""
    with anyio.fail_after(BOUND):
        while not condition(runner := pool._runners["docs"]):
            assert runner._changed is not None
            await runner._changed.wait()


def ready(r: ServerRunner) -> bool:
    return r.current_state()[0] == "ready"


def failed(r: ServerRunner) -> bool:
    return r.status().state == "error"


async def started_pool(tmp_path: Path, config: McpServerConfig) -> McpPool:
    pool = McpPool({"docs": config}, log_dir=tmp_path / "logs")
    await pool.start()
    await pool.wait_ready(timeout=BOUND)
    return pool


async def call(pool: McpPool, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    with anyio.fail_after(BOUND):
        return await pool.call(f"mcp__docs__{tool}", arguments or {}, workspace=Path("/tmp"), session_id="s1")


def sign_ins_for(pool: McpPool) -> SignIns:
    async def reconnect(name: str) -> None:
        await pool.restart_server(name, reason="signed in")

    return SignIns(pool.oauth, on_signed_in=reconnect)


async def sign_in(flows: SignIns, config: McpServerConfig) -> None:
    url = await flows.begin("docs", config, redirect_uri=REDIRECT)
    location = await give_consent(url)
    await flows.finish(AuthorizationResponse.model_validate({k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}))


async def test_a_plain_403_on_a_call_says_what_the_server_said_and_that_only_another_account_could_help(tmp_path: Path):
    servers = OAuthServers()
    gate: list[Forbids] = []
    wrap_mcp(servers, lambda app: gate.append(Forbids(app, ADMINS_ONLY, method="tools/call", tool="whoami")) or gate[0])
    async with servers:
        config = McpServerConfig(type="http", url=servers.url, start_timeout=BOUND)
        pool = await started_pool(tmp_path, config)
        try:
            await sign_in(sign_ins_for(pool), config)
            await until(pool, ready)
            refused = await call(pool, "whoami")
            echo = await call(pool, "echo", {"text": "still"})  # the connection stays up for the rest
            [status] = pool.statuses()
        finally:
            await pool.aclose()
    assert refused.is_error and gate[0].refused == 1  # refused once: the pool did not retry it
    assert "refused tools/call with HTTP 403" in refused.text and "whoami is for admins only" in refused.text
    assert "only as an account the server lets in" in refused.text and "overseer mcp login docs" in refused.text
    assert (echo.text, status.state, status.needs_sign_in) == ("echo: still", "ready", False)


async def test_a_server_that_lets_the_handshake_through_then_answers_403_says_so_and_that_signing_in_will_not_help(
    tmp_path: Path,
):
    servers = OAuthServers()
    gate: list[Forbids] = []

    def bend(app: Any) -> Forbids:
        gate.append(Forbids(OpenHandshake(app, servers), NOT_SHARED, content_type=b"text/plain"))
        return gate[0]

    wrap_mcp(servers, bend)
    async with servers:
        config = McpServerConfig(type="http", url=servers.url, start_timeout=BOUND)
        pool = await started_pool(tmp_path, config)
        try:
            await until(pool, failed)
            [status] = pool.statuses()
            with pytest.raises(SignInFailed) as signing_in:  # the person tries "Sign in" all the same
                await sign_ins_for(pool).begin("docs", config, redirect_uri=REDIRECT)
        finally:
            await pool.aclose()
    assert status.error is not None and not status.needs_sign_in
    for said in (status.error, str(signing_in.value)):
        assert "refused tools/list with HTTP 403" in said and "This workspace is not shared with you." in said
        assert "signing in will not help" in said and "overseer mcp login" not in said
    assert servers.authority.registrations == 0  # nothing to sign in to: no registration either


async def test_a_plain_403_to_a_server_with_its_own_authorization_header_says_those_credentials_are_refused(
    tmp_path: Path,
):
    app = _App(Forbids(regional_app(), ADMINS_ONLY, method="tools/call"), free_port())
    await app.start()
    try:
        config = McpServerConfig(
            type="http", url=f"http://127.0.0.1:{app.port}/mcp", start_timeout=BOUND, headers={"Authorization": "Bearer static"}
        )
        pool = await started_pool(tmp_path, config)
        try:
            refused = await call(pool, "regional", {"region": "eu", "text": "a"})
        finally:
            await pool.aclose()
    finally:
        await app.stop()
    assert refused.is_error and "whoami is for admins only" in refused.text
    assert "configured Authorization header" in refused.text and "sign in" not in refused.text.replace("does not sign in", "")


@pytest.mark.parametrize(
    ("headers", "body", "said", "code"),
    [
        ({"content-type": "application/json"}, b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32099, "message": "nope"}}', "nope", -32099),
        ({"www-authenticate": 'Bearer error="access_denied", error_description="not this tenant"'}, b"", "not this tenant", None),
        ({"content-type": "text/html"}, b"<html><body>Forbidden</body></html>", None, None),  # a page is not quoted
        ({"content-type": "text/plain"}, b"denied\nmore lines\n", "denied", None),
    ],
)
def test_what_a_refusing_server_said_is_read_from_its_challenge_its_json_error_or_its_first_line(
    headers: dict[str, str], body: bytes, said: str | None, code: int | None
):
    assert what_it_said(httpx2.Response(403, headers=headers), body) == (said, code)
