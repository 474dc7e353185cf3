"""Both doors to an OAuth sign-in: the dashboard's (`POST /api/servers/{name}/login`, then
`GET /oauth/callback`, backend/api/oauth.py) and the terminal's (`overseer mcp login NAME`,
backend/mcp/oauth_loopback.py), against the loopback authorization server of
tests/mcp/fixtures/oauth_server.py. The consent page is answered over HTTP (`give_consent`)."""

from __future__ import annotations

import json

import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
import pytest_asyncio
import yaml

from backend.api.app import create_app
from backend.app.host import Host
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings
from tests.mcp.fixtures.oauth_server import OAuthServers, give_consent

BOUND = 30  # seconds; a bound on waits, never a timing assertion
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Api:
    client: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    host: Host
    app: object
    servers: OAuthServers


def docs_config(servers: OAuthServers) -> McpServerConfig:
    return McpServerConfig(type="http", url=servers.url, start_timeout=BOUND)


@pytest_asyncio.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """A host whose only MCP server is the OAuth one, through the real app."""
    async with OAuthServers() as servers, McpPool({"docs": docs_config(servers)}, log_dir=tmp_path / "logs") as pool:
        with ScriptedModelServer() as model:
            host = Host(scripted_settings(tmp_path, model), pool=pool)
            app = create_app(host.settings, host=host)
            await host.start()
            transport = httpx.ASGITransport(app=app)
            headers = {"Authorization": f"Bearer {app.state.auth.token}"}
            try:
                async with (
                    httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client,
                    httpx.AsyncClient(transport=transport, base_url="http://test") as anonymous,
                ):
                    with anyio.fail_after(BOUND):
                        await pool.wait_ready()
                    yield Api(client=client, anonymous=anonymous, host=host, app=app, servers=servers)
            finally:
                await host.aclose()


async def until_ready(pool: McpPool) -> None:
    runner = pool._runners["docs"]  # the runner's change event is what the pool's own waits use
    with anyio.fail_after(BOUND):
        while (runner := pool._runners["docs"]).current_state()[0] != "ready":
            assert runner._changed is not None
            await runner._changed.wait()


async def test_an_admin_signs_in_from_the_dashboard_and_the_callback_reconnects_the_server(api: Api):
    before = (await api.client.get("/api/servers/docs/sign-in")).json()
    listed_before = {s["name"]: s for s in (await api.client.get("/api/servers")).json()}
    started = await api.client.post("/api/servers/docs/login")
    assert started.status_code == 200, started.text
    url = started.json()["authorization_url"]
    assert "redirect_uri=http%3A%2F%2Ftest%2Foauth%2Fcallback" in url
    back = urlsplit(await give_consent(url))
    assert back.path == "/oauth/callback"
    # The browser comes back without any Overseer credential: the OAuth state is what counts.
    page = await api.anonymous.get(f"{back.path}?{back.query}")
    await until_ready(api.host.pool)
    after = (await api.client.get("/api/servers/docs/sign-in")).json()
    listed = (await api.client.get("/api/servers")).text
    whoami = await api.host.pool.call("mcp__docs__whoami", {}, workspace=Path("/tmp"), session_id="s")
    assert (before["needs_sign_in"], before["signed_in"], before["oauth"]) == (True, False, True)
    assert listed_before["docs"]["needs_sign_in"] is True
    assert {s["name"]: s["needs_sign_in"] for s in json.loads(listed)}["docs"] is False
    assert page.status_code == 200 and "Signed in to docs" in page.text
    assert page.headers["cache-control"] == "no-store" and "default-src 'none'" in page.headers["content-security-policy"]
    assert (after["needs_sign_in"], after["signed_in"], after["state"], after["pending"]) == (False, True, "ready", False)
    assert whoami.text in api.servers.authority.clients
    answers = started.text + page.text + listed + str(after)
    assert [t for t in api.servers.authority.issued_tokens if t in answers] == []


async def test_only_admins_start_a_sign_in_and_a_callback_nobody_waits_for_is_refused(api: Api):
    for role in ("viewer", "approver"):
        key = {"X-API-Key": api.app.state.auth.create_api_key(f"{role}-key", role=role)}
        assert (await api.anonymous.post("/api/servers/docs/login", headers=key)).status_code == 403
        assert (await api.anonymous.get("/api/servers/docs/sign-in", headers=key)).status_code == 200
    assert (await api.anonymous.post("/api/servers/docs/login")).status_code == 401
    forged = await api.anonymous.get("/oauth/callback", params={"code": "c", "state": "guessed"})
    assert forged.status_code == 400 and "no sign-in is waiting" in forged.text
    assert api.servers.authority.registrations == 0


async def test_a_sign_in_for_a_server_that_does_not_use_oauth_is_refused(api: Api):
    await api.host.pool.add_server("tokened", McpServerConfig(type="http", url=api.servers.url, headers={"Authorization": "Bearer x"}))
    refused = await api.client.post("/api/servers/tokened/login")
    unknown = await api.client.post("/api/servers/nope/login")
    assert refused.status_code == 409 and "Authorization header" in refused.json()["detail"]
    assert unknown.status_code == 404


async def test_overseer_mcp_login_signs_in_from_a_terminal_and_a_running_pool_uses_it_on_the_next_call(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    async with OAuthServers() as servers, McpPool({"docs": docs_config(servers)}, log_dir=data / "logs") as pool:
        (data / "overseer.yaml").write_text(yaml.safe_dump({"mcpServers": {"docs": {"type": "http", "url": servers.url}}}))
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        assert pool.statuses()[0].needs_sign_in
        env = {**os.environ, "OVERSEER_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
        env.pop("OVERSEER_CONFIG", None)
        command = [sys.executable, "-m", "backend.cli", "mcp", "login", "docs"]
        async with await anyio.open_process(command, cwd=tmp_path, env=env) as process:
            assert process.stdout is not None
            with anyio.fail_after(BOUND):
                printed = ""
                async for chunk in process.stdout:
                    printed += chunk.decode()
                    if "Waiting for the answer" in printed:
                        break
                url = next(line.strip() for line in printed.splitlines() if line.strip().startswith("http"))
                back = await give_consent(url)
                async with httpx.AsyncClient() as browser:
                    page = await browser.get(back)
                rest = b"".join([chunk async for chunk in process.stdout]).decode()
                code = await process.wait()
        with anyio.fail_after(BOUND):
            echo = await pool.call("mcp__docs__echo", {"text": "from the terminal"}, workspace=Path("/tmp"), session_id="s")
        [status] = pool.statuses()
    assert back.startswith("http://127.0.0.1:") and urlsplit(back).path == "/oauth/callback"
    assert page.status_code == 200 and "Signed in" in page.text
    assert code == 0 and "Signed in to 'docs'" in rest
    assert (echo.is_error, echo.text) == (False, "echo: from the terminal")
    assert (status.state, status.needs_sign_in) == ("ready", False)
    assert [t for t in servers.authority.issued_tokens if t in printed + rest] == []
