"""What a program gets where the dashboard is not: JSON 404s for API, OAuth-discovery and MCP paths,
and a 401 on `/mcp` whose `WWW-Authenticate` says how to authenticate (issue 35, item 8).

The app serves a built dashboard here (an `index.html` in a temporary `web_dist`), so a path that
fell through to the single-page fallback would answer 200 with HTML, as it did for Claude Code.
"""

from __future__ import annotations

import httpx
import pytest

from backend.api.app import create_app
from backend.app.host import Host
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

DASHBOARD_HTML = "<!doctype html><title>Overseer</title>"


@pytest.fixture
async def anonymous(tmp_path, pool):
    """An anonymous client of an app that serves a built dashboard."""
    web_dist = tmp_path / "dist"
    web_dist.mkdir()
    (web_dist / "index.html").write_text(DASHBOARD_HTML)
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model)
        host = Host(settings, pool=pool)
        app = create_app(settings, host=host, web_dist=web_dist)
        await host.start()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
                client.token = app.state.auth.token  # type: ignore[attr-defined]  # for the one test that signs in
                yield client
        finally:
            await host.aclose()


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known",
        "/mcp/",
        "/api",
    ],
)
async def test_a_discovery_or_mcp_path_nothing_serves_is_a_json_404_not_the_dashboard(anonymous, path):
    response = await anonymous.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"detail": f"no route {path}"}


async def test_an_unknown_api_path_is_a_json_404_with_a_credential_and_a_json_401_without(anonymous):
    signed_in = await anonymous.get("/api/no-such-thing/at-all", headers={"Authorization": f"Bearer {anonymous.token}"})
    assert signed_in.status_code == 404
    assert signed_in.json() == {"detail": "no route /api/no-such-thing/at-all"}
    refused = await anonymous.get("/api/no-such-thing/at-all")
    assert refused.status_code == 401 and refused.json() == {"detail": "authentication required"}


async def test_a_client_side_route_still_gets_the_dashboard(anonymous):
    response = await anonymous.get("/sessions/some-id")
    assert response.status_code == 200 and response.text == DASHBOARD_HTML


async def test_mcp_without_a_token_is_a_401_whose_challenge_names_the_bearer_scheme_and_realm(anonymous):
    response = await anonymous.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="overseer"'
    assert "resource_metadata" not in response.headers["www-authenticate"]  # none is served (see above)
    assert "overseer api-key create" in response.json()["detail"]


async def test_mcp_with_a_wrong_token_is_a_401_saying_the_token_is_invalid(anonymous):
    response = await anonymous.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": "Bearer wrong"}
    )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="overseer", error="invalid_token"')
