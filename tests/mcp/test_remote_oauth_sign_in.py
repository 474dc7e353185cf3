"""Remote MCP servers behind OAuth (backend/mcp/oauth_client.py, oauth_login.py), against a real
authorization server and resource server on loopback (tests/mcp/fixtures/oauth_server.py).

The person's part (opening the URL, clicking "Allow") is done over HTTP by `give_consent`; the
browser's is in tests/e2e/test_oauth_sign_in.py. No sleeps: every wait is on an event, bounded.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import AuthorizationResponse, SignIns, SignInFailed
from backend.mcp.server import ServerRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from oauth_server import OAuthServers, give_consent  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion
REDIRECT = "http://127.0.0.1:8000/oauth/callback"  # the dashboard's; the browser's visit is the e2e test's


@pytest.fixture
async def servers() -> AsyncIterator[OAuthServers]:
    async with OAuthServers() as found:
        yield found


def docs_config(servers: OAuthServers, **overrides: Any) -> McpServerConfig:
    return McpServerConfig(**({"type": servers.transport, "url": servers.url, "start_timeout": BOUND} | overrides))


async def started_pool(tmp_path: Path, config: McpServerConfig) -> McpPool:
    pool = McpPool({"docs": config}, log_dir=tmp_path / "logs")
    await pool.start()
    await pool.wait_ready(timeout=BOUND)
    return pool


def runner(pool: McpPool) -> ServerRunner:
    return pool._runners["docs"]  # its change event is what the pool's own waits use


async def until(pool: McpPool, condition: Callable[[ServerRunner], bool]) -> None:
    """Wait (bounded) until the docs server's runner satisfies `condition`."""
    with anyio.fail_after(BOUND):
        while not condition(runner(pool)):
            changed = runner(pool)._changed
            assert changed is not None
            await changed.wait()


def needs_sign_in(r: ServerRunner) -> bool:
    return r.status().needs_sign_in


def ready(r: ServerRunner) -> bool:
    return r.current_state()[0] == "ready"


async def call(pool: McpPool, tool: str, arguments: dict[str, Any] | None = None):
    with anyio.fail_after(BOUND):
        return await pool.call(f"mcp__docs__{tool}", arguments or {}, workspace=Path("/tmp"), session_id="s1")


def sign_ins_for(pool: McpPool) -> SignIns:
    """Dashboard sign-ins wired as the API wires them: a completed one reconnects the server."""

    async def reconnect(name: str) -> None:
        if pool.config_of(name) is not None:
            await pool.restart_server(name, reason="signed in")

    return SignIns(pool.oauth, on_signed_in=reconnect)


def answer_of(location: str) -> AuthorizationResponse:
    """The callback's query, as the browser brings it back to Overseer."""
    return AuthorizationResponse.model_validate({k: v[0] for k, v in parse_qs(urlsplit(location).query).items()})


async def sign_in(flows: SignIns, config: McpServerConfig) -> str:
    """A whole dashboard sign-in, the person allowing it; the authorization URL it used."""
    url = await flows.begin("docs", config, redirect_uri=REDIRECT)
    await flows.finish(answer_of(await give_consent(url)))
    return url


async def test_a_server_asking_for_oauth_needs_sign_in_and_its_tools_say_how(tmp_path: Path, servers):
    pool = await started_pool(tmp_path, docs_config(servers))
    try:
        [status] = pool.statuses()
        tools = pool.tools()
        result = await call(pool, "echo", {"text": "x"})
    finally:
        await pool.aclose()
    assert (status.state, status.needs_sign_in) == ("error", True)
    assert "overseer mcp login docs" in (status.error or "") and "Sign in" in (status.error or "")
    assert tools == []
    assert result.is_error and "overseer mcp login docs" in result.text
    assert servers.authority.registrations == 0  # the pool never registers or sends anyone anywhere


async def test_signing_in_discovers_registers_and_gets_a_pkce_code_for_a_token_bound_to_the_server(tmp_path: Path, servers):
    pool = await started_pool(tmp_path, docs_config(servers))
    try:
        url = await sign_in(sign_ins_for(pool), docs_config(servers))
        await until(pool, ready)
        whoami = await call(pool, "whoami")
        echo = await call(pool, "echo", {"text": "signed"})
        [status] = pool.statuses()
    finally:
        await pool.aclose()
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(f"{servers.issuer}/authorize?")  # found through RFC 9728 and RFC 8414
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) >= 43
    assert query["resource"] == [servers.url] and query["redirect_uri"] == [REDIRECT]
    assert servers.authority.registrations == 1  # RFC 7591
    assert servers.authority.resources == [servers.url]  # RFC 8707: the token is for this server only
    [client_id] = servers.authority.clients
    assert (whoami.text, echo.text) == (client_id, "echo: signed")
    assert (status.state, status.needs_sign_in, status.error) == ("ready", False, None)


async def test_a_code_taken_on_its_way_back_is_useless_without_the_verifier(tmp_path: Path, servers):
    pool = McpPool({}, log_dir=tmp_path / "logs")
    flows = sign_ins_for(pool)
    url = await flows.begin("docs", docs_config(servers), redirect_uri=REDIRECT)
    answer = answer_of(await give_consent(url))
    [client_id] = servers.authority.clients
    async with httpx.AsyncClient() as client:
        stolen = await client.post(
            f"{servers.issuer}/token",
            data={"grant_type": "authorization_code", "code": answer.code, "redirect_uri": REDIRECT,
                  "client_id": client_id, "code_verifier": "x" * 64},
        )
    with anyio.fail_after(BOUND):
        name = await flows.finish(answer)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"
    assert name == "docs" and pool.oauth.has_tokens("docs")


async def test_a_configured_client_is_used_instead_of_registering(tmp_path: Path, servers):
    from mcp.shared.auth import OAuthClientInformationFull

    servers.authority.clients["pre-registered"] = OAuthClientInformationFull(
        client_id="pre-registered", client_secret="cs-SECRET", token_endpoint_auth_method="client_secret_post",
        redirect_uris=[REDIRECT], scope="docs:read",
    )
    config = docs_config(servers, oauth={"client_id": "pre-registered", "client_secret": "cs-SECRET"})
    pool = await started_pool(tmp_path, config)
    try:
        await sign_in(sign_ins_for(pool), config)
        await until(pool, ready)
        whoami = await call(pool, "whoami")
    finally:
        await pool.aclose()
    assert whoami.text == "pre-registered" and servers.authority.registrations == 0
    assert pool.oauth.read("docs").client_info is None  # the secret stays in the config, not the vault


async def test_a_refusal_at_the_consent_page_fails_the_sign_in_with_the_servers_reason(tmp_path: Path, servers):
    flows = sign_ins_for(McpPool({}, log_dir=tmp_path / "logs"))
    url = await flows.begin("docs", docs_config(servers), redirect_uri=REDIRECT)
    with pytest.raises(SignInFailed, match="access_denied"):
        await flows.finish(answer_of(await give_consent(url, allow=False)))
    assert not flows.pending("docs")


async def test_a_token_near_expiry_is_refreshed_before_use_and_one_the_server_expired_after_its_401(tmp_path: Path, servers):
    pool = await started_pool(tmp_path, docs_config(servers))
    try:
        await sign_in(sign_ins_for(pool), docs_config(servers))
        await until(pool, ready)
        stored = pool.oauth.read("docs")
        # 30 s left, inside the refresh margin; read afresh on reconnecting, as after a restart.
        pool.oauth.write("docs", stored.model_copy(update={"expires_at": time.time() + 30}))
        await pool.restart_server("docs")
        await until(pool, ready)
        refreshed_on_connect = servers.authority.refreshes
        first = await call(pool, "echo", {"text": "one"})
        servers.authority.expire_access_tokens()  # the server's clock says so, ours not yet
        second = await call(pool, "echo", {"text": "two"})
        [status] = pool.statuses()
    finally:
        await pool.aclose()
    assert refreshed_on_connect == 1 and servers.authority.refreshes == 2
    assert (first.text, second.text) == ("echo: one", "echo: two")
    assert (status.state, status.needs_sign_in) == ("ready", False)


async def test_a_revoked_sign_in_puts_the_server_in_needs_sign_in_and_a_new_one_brings_it_back(tmp_path: Path, servers):
    pool = await started_pool(tmp_path, docs_config(servers))
    flows = sign_ins_for(pool)
    try:
        await sign_in(flows, docs_config(servers))
        await until(pool, ready)
        servers.authority.revoke_everything()
        refused = await call(pool, "echo", {"text": "x"})
        await until(pool, needs_sign_in)
        [status] = pool.statuses()
        await sign_in(flows, docs_config(servers))
        await until(pool, ready)
        again = await call(pool, "echo", {"text": "back"})
    finally:
        await pool.aclose()
    assert refused.is_error and "overseer mcp login docs" in refused.text
    assert servers.authority.refused_refreshes >= 1  # a refresh was tried before giving up
    assert status.state == "error" and "sign-in" in (status.error or "")
    assert again.text == "echo: back"


async def test_no_token_or_secret_reaches_a_log_line_or_a_status(tmp_path: Path, servers, caplog):
    caplog.set_level(logging.DEBUG)
    pool = await started_pool(tmp_path, docs_config(servers))
    try:
        await sign_in(sign_ins_for(pool), docs_config(servers))
        await until(pool, ready)
        servers.authority.expire_access_tokens()
        await call(pool, "echo", {"text": "x"})  # a refresh
        servers.authority.revoke_everything()
        await call(pool, "echo", {"text": "x"})
        await until(pool, needs_sign_in)
        statuses = repr(pool.statuses())
    finally:
        await pool.aclose()
    issued = servers.authority.issued_tokens
    assert len(issued) >= 4  # a sign-in and at least one refresh
    log = "\n".join(record.getMessage() for record in caplog.records)
    server_logs = "".join(p.read_text() for p in (tmp_path / "logs").iterdir())
    assert [t for t in issued if t in log or t in statuses or t in server_logs] == []


async def test_a_server_on_the_older_sse_transport_signs_in_the_same_way(tmp_path: Path):
    async with OAuthServers(transport="sse") as servers:
        pool = await started_pool(tmp_path, docs_config(servers))
        try:
            [before] = pool.statuses()
            await sign_in(sign_ins_for(pool), docs_config(servers))
            await until(pool, ready)
            echo = await call(pool, "echo", {"text": "over sse"})
        finally:
            await pool.aclose()
    assert before.needs_sign_in and servers.authority.resources == [servers.url]
    assert (echo.is_error, echo.text) == (False, "echo: over sse")
