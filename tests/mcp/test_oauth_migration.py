"""A remote MCP server that moves to another authorization server (SEP-2352, 2026-07-28), against
the loopback servers of tests/mcp/fixtures/oauth_migration.py: the pool's tokens from the first
stop working, the next sign-in registers Overseer again at the second and signs in there, and
nothing of the first (its client id, its tokens) reaches the second. No network, no sleeps.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import AuthorizationResponse, SignIns
from backend.mcp.oauth_store import StoredSignIn
from backend.mcp.server import ServerRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from oauth_migration import MigratingServers  # noqa: E402
from oauth_server import give_consent  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion
REDIRECT = "http://127.0.0.1:8000/oauth/callback"


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


async def whoami(pool: McpPool) -> Any:
    with anyio.fail_after(BOUND):
        return await pool.call("mcp__docs__whoami", {}, workspace=Path("/tmp"), session_id="s1")


async def sign_in(pool: McpPool, config: McpServerConfig) -> None:
    """A whole dashboard sign-in, the person allowing it; the server reconnected after it."""

    async def reconnect(name: str) -> None:
        await pool.restart_server(name, reason="signed in")

    flows = SignIns(pool.oauth, on_signed_in=reconnect)
    url = await flows.begin("docs", config, redirect_uri=REDIRECT)
    location = await give_consent(url)
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    await flows.finish(AuthorizationResponse.model_validate(query))
    await until(pool, ready)


async def migrated_pool(tmp_path: Path, servers: MigratingServers, *, between: Callable[[McpPool], None] | None = None):
    """Sign in at the old authorization server, move the server to the new one, call it.

    (pool, config, the first answer, (the refused one, the status after it)).
    """
    config = McpServerConfig(type="http", url=servers.url, start_timeout=BOUND)
    pool = McpPool({"docs": config}, log_dir=tmp_path / "logs")
    await pool.start()
    await pool.wait_ready(timeout=BOUND)
    await until(pool, needs_sign_in)
    await sign_in(pool, config)
    first = await whoami(pool)
    if between is not None:
        between(pool)
    servers.migrate()
    refused = await whoami(pool)
    await until(pool, needs_sign_in)
    [status] = pool.statuses()
    return pool, config, first, (refused, status)


async def test_a_server_that_moved_to_another_authorization_server_is_signed_in_again_there_with_a_new_registration(
    tmp_path: Path,
):
    async with MigratingServers() as servers:
        pool, config, first, (refused, status) = await migrated_pool(tmp_path, servers)
        try:
            await sign_in(pool, config)
            second = await whoami(pool)
            stored = pool.oauth.read("docs")
        finally:
            await pool.aclose()
    [old_client] = servers.old.clients
    [new_client] = servers.new.clients
    assert first.text == old_client and refused.is_error
    assert status.error is not None and f"now signs in at {servers.new.issuer}" in status.error
    assert second.text == new_client != old_client  # signed in at the new server, as its own client
    assert (servers.old.registrations, servers.new.registrations) == (1, 1)
    assert old_client not in servers.new_log.client_ids and servers.new_log.client_ids  # it did see ours
    # The old server's tokens went nowhere: not to the new server, not even to the old one for a refresh.
    assert not [t for t in servers.old.issued_tokens if any(t in r for r in servers.new_log.requests)]
    assert servers.old.refreshes == servers.new.refreshes == 0
    assert stored.client_info is not None and stored.client_info.client_id == new_client
    assert stored.client_info.issuer == servers.new.issuer
    assert stored.oauth_metadata is not None and issuers_match(str(stored.oauth_metadata.issuer), servers.new.issuer)


async def test_a_registration_stored_without_its_issuer_is_not_reused_at_another_authorization_server(tmp_path: Path):
    def as_an_older_overseer_stored_it(pool: McpPool) -> None:
        # Registrations kept before they carried their issuer: only the metadata beside them says whose they are.
        stored = pool.oauth.read("docs")
        assert stored.client_info is not None
        pool.oauth.write("docs", stored.model_copy(update={"client_info": stored.client_info.model_copy(update={"issuer": None})}))

    async with MigratingServers() as servers:
        pool, config, _, _ = await migrated_pool(tmp_path, servers, between=as_an_older_overseer_stored_it)
        try:
            await sign_in(pool, config)
            second = await whoami(pool)
        finally:
            await pool.aclose()
    [old_client] = servers.old.clients
    [new_client] = servers.new.clients
    assert second.text == new_client and old_client not in servers.new_log.client_ids


def test_a_refresh_never_presents_a_registration_made_at_another_authorization_server():
    def metadata(issuer: str) -> OAuthMetadata:
        return OAuthMetadata.model_validate(
            {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
             "registration_endpoint": f"{issuer}/register"}
        )

    def client(issuer: str | None) -> OAuthClientInformationFull:
        return OAuthClientInformationFull(client_id="c", redirect_uris=[REDIRECT], issuer=issuer)  # type: ignore[list-item]

    old, new = "http://127.0.0.1:1", "http://127.0.0.1:2"
    # A sign-in at the new server registered there, then did not finish: the tokens are still the old server's.
    half_moved = StoredSignIn(client_info=client(new), oauth_metadata=metadata(old))
    unstamped = StoredSignIn(client_info=client(None), oauth_metadata=metadata(old))
    assert half_moved.refresh_client() is None and half_moved.registration() is not None
    assert unstamped.refresh_client() is not None
    bound = unstamped.registration()
    assert bound is not None and bound.issuer is not None and issuers_match(bound.issuer, old)  # the metadata's server
