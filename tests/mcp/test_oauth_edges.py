"""OAuth sign-in edges with remote MCP servers (backend/mcp/oauth_client.py, oauth_login.py, remote.py),
against the loopback authorization and MCP servers of tests/mcp/fixtures/oauth_server.py, bent by the
wrappers of tests/mcp/fixtures/oauth_gates.py: how a configured client authenticates at the token
endpoint, a server that asks for a sign-in only after `initialize`, and a step-up to more scope
(SEP-835). No network, no sleeps: every wait is on an event, bounded.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from mcp.shared.auth import OAuthClientInformationFull

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import AuthorizationResponse, SignIns
from backend.mcp.server import ServerRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from oauth_gates import (  # noqa: E402
    WRITE_SCOPE,
    HeaderLog,
    MethodsAdvertised,
    NoHandshake,
    OpenHandshake,
    ScopedTool,
    regional_app,
    wrap_authorization,
    wrap_mcp,
)
from oauth_server import SCOPE, OAuthServers, _App, free_port, give_consent  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion
REDIRECT = "http://127.0.0.1:8000/oauth/callback"
CLIENT = "pre-registered"
SECRET = "cs-SECRET"


def docs_config(servers: OAuthServers, **overrides: Any) -> McpServerConfig:
    return McpServerConfig(**({"type": "http", "url": servers.url, "start_timeout": BOUND} | overrides))


def configured(servers: OAuthServers, method: str, scope: str = SCOPE) -> McpServerConfig:
    """A config naming a client the authorization server knows, registered there with `method`."""
    servers.authority.clients[CLIENT] = OAuthClientInformationFull(
        client_id=CLIENT, client_secret=SECRET, token_endpoint_auth_method=method, redirect_uris=[REDIRECT], scope=scope
    )
    return docs_config(servers, oauth={"client_id": CLIENT, "client_secret": SECRET})


async def started_pool(tmp_path: Path, config: McpServerConfig) -> McpPool:
    pool = McpPool({"docs": config}, log_dir=tmp_path / "logs")
    await pool.start()
    await pool.wait_ready(timeout=BOUND)
    return pool


async def until(pool: McpPool, condition: Callable[[ServerRunner], bool]) -> None:
    """Wait (bounded) until the docs server's runner satisfies `condition`."""
    with anyio.fail_after(BOUND):
        while not condition(runner := pool._runners["docs"]):
            assert runner._changed is not None
            await runner._changed.wait()


def ready(r: ServerRunner) -> bool:
    return r.current_state()[0] == "ready"


def needs_sign_in(r: ServerRunner) -> bool:
    return r.status().needs_sign_in


async def call(pool: McpPool, tool: str, arguments: dict[str, Any] | None = None):
    with anyio.fail_after(BOUND):
        return await pool.call(f"mcp__docs__{tool}", arguments or {}, workspace=Path("/tmp"), session_id="s1")


def sign_ins_for(pool: McpPool) -> SignIns:
    """Dashboard sign-ins wired as the API wires them: a completed one reconnects the server."""

    async def reconnect(name: str) -> None:
        await pool.restart_server(name, reason="signed in")

    return SignIns(pool.oauth, on_signed_in=reconnect)


async def sign_in(flows: SignIns, config: McpServerConfig) -> str:
    """A whole dashboard sign-in, the person allowing it; the authorization URL it used."""
    url = await flows.begin("docs", config, redirect_uri=REDIRECT)
    location = await give_consent(url)
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    await flows.finish(AuthorizationResponse.model_validate(query))
    return url


# Item 1: how a configured client authenticates at the token endpoint.


@pytest.mark.parametrize(
    ("advertised", "method"),
    [
        (["client_secret_basic"], "client_secret_basic"),
        (None, "client_secret_basic"),  # RFC 8414: a list left out means client_secret_basic
        (["client_secret_post"], "client_secret_post"),
    ],
)
async def test_a_configured_client_authenticates_at_the_token_endpoint_the_way_its_server_advertises(
    tmp_path: Path, advertised: list[str] | None, method: str
):
    servers = OAuthServers()
    tap: list[MethodsAdvertised] = []
    wrap_authorization(servers, lambda app: tap.append(MethodsAdvertised(app, advertised)) or tap[0])
    async with servers:
        config = configured(servers, method)
        pool = await started_pool(tmp_path, config)
        try:
            await sign_in(sign_ins_for(pool), config)
            await until(pool, ready)
            servers.authority.expire_access_tokens()  # the next call's 401 makes the pool refresh
            whoami = await call(pool, "whoami")
        finally:
            await pool.aclose()
    requests = tap[0].token_requests
    assert whoami.text == CLIENT and servers.authority.registrations == 0
    assert [r.grant_type for r in requests] == ["authorization_code", "refresh_token"]
    basic = method == "client_secret_basic"
    assert all(r.basic == basic and r.secret_in_body == (not basic) for r in requests)


# Item 2: `initialize` goes through without a token, the listing after it does not.


async def test_signing_in_to_a_server_that_asks_only_after_the_handshake_probes_a_listing(tmp_path: Path):
    servers = OAuthServers()
    gate: list[OpenHandshake] = []
    wrap_mcp(servers, lambda app: gate.append(OpenHandshake(app, servers)) or gate[0])
    async with servers:
        pool = await started_pool(tmp_path, docs_config(servers))
        try:
            await until(pool, needs_sign_in)  # the pool's own listing was refused
            await sign_in(sign_ins_for(pool), docs_config(servers))
            await until(pool, ready)
            whoami = await call(pool, "whoami")
        finally:
            await pool.aclose()
    assert gate[0].handshakes >= 2  # the pool's and the sign-in's probe were let through
    [client_id] = servers.authority.clients
    assert whoami.text == client_id and pool.oauth.has_tokens("docs")



async def test_signing_in_to_a_server_without_the_handshake_probes_a_listing_of_the_2026_era(tmp_path: Path):
    servers = OAuthServers()
    gate: list[NoHandshake] = []
    wrap_mcp(servers, lambda app: gate.append(NoHandshake(app)) or gate[0])
    async with servers:
        pool = await started_pool(tmp_path, docs_config(servers))
        try:
            await until(pool, needs_sign_in)
            await sign_in(sign_ins_for(pool), docs_config(servers))
            await until(pool, ready)
            whoami = await call(pool, "whoami")
        finally:
            await pool.aclose()
    [client_id] = servers.authority.clients
    assert gate[0].refused >= 1 and whoami.text == client_id

# Item 3: a 403 insufficient_scope step-up (SEP-835).


async def test_a_step_up_challenge_says_which_scope_is_missing_and_the_next_sign_in_asks_for_the_union(tmp_path: Path):
    servers = OAuthServers()
    gate: list[ScopedTool] = []
    wrap_mcp(servers, lambda app: gate.append(ScopedTool(app, servers)) or gate[0])
    async with servers:
        config = configured(servers, "client_secret_post", scope=f"{SCOPE} {WRITE_SCOPE}")
        pool = await started_pool(tmp_path, config)
        flows = sign_ins_for(pool)
        try:
            first_url = await sign_in(flows, config)
            await until(pool, ready)
            refused = await call(pool, "whoami")
            echo = await call(pool, "echo", {"text": "still"})  # the connection stays up for the rest
            [status] = pool.statuses()
            second_url = await sign_in(flows, config)
            await until(pool, ready)
            whoami = await call(pool, "whoami")
            stored = pool.oauth.read("docs")
        finally:
            await pool.aclose()
    asked = [parse_qs(urlsplit(url).query)["scope"][0].split() for url in (first_url, second_url)]
    assert asked == [[SCOPE], [SCOPE, WRITE_SCOPE]]
    assert refused.is_error and WRITE_SCOPE in refused.text and "overseer mcp login docs" in refused.text
    assert (echo.text, status.state, status.needs_sign_in) == ("echo: still", "ready", False)
    assert whoami.text == CLIENT and gate[0].challenges == 1
    assert stored.step_up_scope is None  # granted: nothing more to ask for


async def test_a_step_up_that_a_new_sign_in_did_not_satisfy_says_signing_in_again_will_not_help(tmp_path: Path):
    servers = OAuthServers()
    gate: list[ScopedTool] = []
    wrap_mcp(servers, lambda app: gate.append(ScopedTool(app, servers, always=True)) or gate[0])
    async with servers:
        config = configured(servers, "client_secret_post", scope=f"{SCOPE} {WRITE_SCOPE}")
        pool = await started_pool(tmp_path, config)
        flows = sign_ins_for(pool)
        try:
            await sign_in(flows, config)
            await until(pool, ready)
            first = await call(pool, "whoami")
            await sign_in(flows, config)
            await until(pool, ready)
            second = await call(pool, "whoami")
        finally:
            await pool.aclose()
    assert "overseer mcp login docs" in first.text and "will not help" not in first.text
    assert second.is_error and "will not help" in second.text and WRITE_SCOPE in second.text
    assert gate[0].challenges == 2  # one request per call: the pool never retried on its own


# Item 4: SEP-2243's headers (2026-07-28) on the way to a remote server.


async def test_a_remote_call_mirrors_its_method_name_and_annotated_arguments_into_headers(tmp_path: Path):
    log = HeaderLog(regional_app())
    app = _App(log, free_port())
    await app.start()
    try:
        config = McpServerConfig(type="http", url=f"http://127.0.0.1:{app.port}/mcp", start_timeout=BOUND)
        pool = await started_pool(tmp_path, config)
        try:
            ascii_call = await call(pool, "regional", {"region": "eu-west-1", "text": "a"})
            other_call = await call(pool, "regional", {"region": "Zürich", "text": "b"})
        finally:
            await pool.aclose()
    finally:
        await app.stop()
    calls = [p for p in log.posts if p.get("mcp-method") == "tools/call"]
    assert (ascii_call.text, other_call.text) == ("eu-west-1: a", "Zürich: b")
    assert [p.get("mcp-name") for p in calls] == ["regional", "regional"]
    assert calls[0]["mcp-param-region"] == "eu-west-1"
    assert calls[1]["mcp-param-region"].startswith("=?base64?")  # not a plain ASCII field value
    assert all("mcp-method" in p for p in log.posts)  # every POST names its method
