"""Client ID Metadata Documents (backend/mcp/oauth_cimd.py): with `oauth.client_metadata_url`
configured, Overseer signs in with that URL as its client id where the authorization server takes
such documents, and registers dynamically where it does not. Against the loopback servers of
tests/mcp/fixtures/oauth_server.py, the authorization server wrapped by oauth_cimd.py. No network,
no sleeps.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx

from backend.mcp import McpPool
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_cimd import client_metadata_document, redirect_uris
from backend.mcp.oauth_login import AuthorizationResponse, SignIns
from backend.mcp.oauth_loopback import login_in_terminal
from backend.mcp.oauth_store import OAuthVault
from backend.mcp.server import ServerRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from oauth_cimd import DocumentClients  # noqa: E402
from oauth_gates import wrap_authorization  # noqa: E402
from oauth_server import OAuthServers, free_port, give_consent  # noqa: E402

BOUND = 20  # seconds; a bound on waits, never a timing assertion
DASHBOARD = "http://127.0.0.1:8000"
REDIRECT = f"{DASHBOARD}/oauth/callback"
URL = "https://overseer.example.org/oauth/client.json"


@asynccontextmanager
async def cimd_servers(*, takes_documents: bool) -> AsyncIterator[tuple[OAuthServers, DocumentClients]]:
    servers = OAuthServers()
    clients: list[DocumentClients] = []

    def wrap(app: Any) -> DocumentClients:
        clients.append(DocumentClients(app, servers.authority, takes_documents))
        return clients[0]

    wrap_authorization(servers, wrap)
    async with servers:
        yield servers, clients[0]


def docs_config(servers: OAuthServers, **oauth: Any) -> McpServerConfig:
    return McpServerConfig(type="http", url=servers.url, start_timeout=BOUND, oauth=oauth or None)


def publish(authority: DocumentClients, config: McpServerConfig) -> None:
    """Put up the document `overseer mcp client-metadata` prints for this config."""
    uris = redirect_uris(URL, {"docs": config}, dashboard_urls=[DASHBOARD])
    authority.documents[URL] = client_metadata_document(URL, uris)


async def until(pool: McpPool, condition: Callable[[ServerRunner], bool]) -> None:
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


async def signed_in_pool(tmp_path: Path, config: McpServerConfig) -> McpPool:
    """A pool whose server asked for a sign-in, and the dashboard sign-in the person allowed."""
    pool = McpPool({"docs": config}, log_dir=tmp_path / "logs", oauth_dir=tmp_path / "oauth")
    await pool.start()
    await until(pool, needs_sign_in)
    await sign_in(pool, config)
    return pool


async def sign_in(pool: McpPool, config: McpServerConfig) -> None:
    async def reconnect(name: str) -> None:
        await pool.restart_server(name, reason="signed in")

    flows = SignIns(pool.oauth, on_signed_in=reconnect)
    url = await flows.begin("docs", config, redirect_uri=REDIRECT)
    location = await give_consent(url)
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    await flows.finish(AuthorizationResponse.model_validate(query))
    await until(pool, ready)


async def test_a_server_that_takes_metadata_documents_is_signed_in_to_with_the_configured_url_as_client_id(
    tmp_path: Path,
):
    async with cimd_servers(takes_documents=True) as (servers, authority):
        config = docs_config(servers, client_metadata_url=URL)
        publish(authority, config)
        pool = await signed_in_pool(tmp_path, config)
        try:
            answer = await whoami(pool)
            stored = pool.oauth.read("docs")
        finally:
            await pool.aclose()
    assert not answer.is_error and answer.text == URL  # the token was issued to the document's client
    assert servers.authority.registrations == 0
    assert authority.client_ids and set(authority.client_ids) == {URL}  # no other client id was ever sent
    assert authority.fetched
    assert stored.client_info is not None and stored.client_info.client_id == URL


async def test_a_server_without_metadata_documents_still_gets_a_dynamic_registration(tmp_path: Path):
    async with cimd_servers(takes_documents=False) as (servers, authority):
        config = docs_config(servers, client_metadata_url=URL)
        publish(authority, config)
        pool = await signed_in_pool(tmp_path, config)
        try:
            answer = await whoami(pool)
        finally:
            await pool.aclose()
    [registered] = servers.authority.clients
    assert not answer.is_error and answer.text == registered != URL
    assert servers.authority.registrations == 1
    assert URL not in authority.client_ids and not authority.fetched


async def test_tokens_issued_to_the_document_client_are_refreshed_with_its_url(tmp_path: Path):
    async with cimd_servers(takes_documents=True) as (servers, authority):
        config = docs_config(servers, client_metadata_url=URL)
        publish(authority, config)
        pool = await signed_in_pool(tmp_path, config)
        try:
            servers.authority.expire_access_tokens()
            answer = await whoami(pool)
        finally:
            await pool.aclose()
    assert not answer.is_error and answer.text == URL
    assert (servers.authority.refreshes, servers.authority.refused_refreshes) == (1, 0)
    assert servers.authority.registrations == 0


async def test_a_registration_made_before_the_url_was_configured_gives_way_to_the_url(tmp_path: Path):
    async with cimd_servers(takes_documents=True) as (servers, authority):
        before = docs_config(servers)
        pool = await signed_in_pool(tmp_path, before)
        try:
            first = await whoami(pool)
        finally:
            await pool.aclose()
        after = docs_config(servers, client_metadata_url=URL)
        publish(authority, after)
        pool = McpPool({"docs": after}, log_dir=tmp_path / "logs", oauth_dir=tmp_path / "oauth")
        await pool.start()
        try:
            await until(pool, ready)  # still signed in with the registration
            await sign_in(pool, after)  # the person signs in again, the URL configured now
            second = await whoami(pool)
        finally:
            await pool.aclose()
    assert first.text != URL and servers.authority.registrations == 1
    assert second.text == URL


async def never_signed_in(name: str) -> None:
    raise AssertionError(f"{name} was signed in with a redirect its document does not list")


async def test_a_document_that_does_not_list_the_callback_makes_the_sign_in_fail_at_the_server(tmp_path: Path):
    async with cimd_servers(takes_documents=True) as (servers, authority):
        config = docs_config(servers, client_metadata_url=URL)
        authority.documents[URL] = client_metadata_document(URL, ["http://127.0.0.1:9/oauth/callback"])
        pool = McpPool({"docs": config}, log_dir=tmp_path / "logs", oauth_dir=tmp_path / "oauth")
        await pool.start()
        try:
            await until(pool, needs_sign_in)
            flows = SignIns(pool.oauth, on_signed_in=never_signed_in)
            url = await flows.begin("docs", config, redirect_uri=REDIRECT)
            async with httpx.AsyncClient(timeout=BOUND) as client:
                refused = await client.get(url)
            await flows.aclose()
        finally:
            await pool.aclose()
    # The authorization server checked our redirect against the published document, not a registration.
    assert refused.status_code == 400 and servers.authority.registrations == 0
    assert authority.client_ids == [URL]


async def test_the_terminal_sign_in_uses_the_url_with_the_loopback_callback_the_document_lists(tmp_path: Path):
    async with cimd_servers(takes_documents=True) as (servers, authority):
        config = docs_config(servers, client_metadata_url=URL, callback_port=free_port())
        publish(authority, config)
        vault = OAuthVault(tmp_path / "oauth")
        shown: list[str] = []
        came_back: list[int] = []

        async def browser(url: str) -> None:
            location = await give_consent(url)
            async with httpx.AsyncClient(timeout=BOUND) as client:
                came_back.append((await client.get(location)).status_code)

        def say(line: str) -> None:
            if line.startswith("Open this URL"):
                shown.append(line.split()[-1])
                task_group.start_soon(browser, shown[-1])

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as task_group:
                await login_in_terminal("docs", config, vault, say=say)
    assert came_back == [200]
    assert parse_qs(urlsplit(shown[0]).query)["client_id"] == [URL]
    assert servers.authority.registrations == 0 and servers.authority.code_exchanges == 1
    stored = vault.read("docs")
    assert stored.tokens is not None and stored.client_info is not None and stored.client_info.client_id == URL
