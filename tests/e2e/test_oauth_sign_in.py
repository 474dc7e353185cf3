"""Signing in to a remote MCP server from the Servers page, in real Chromium: the person clicks
"Sign in", allows Overseer on the authorization server's consent page in the new tab, comes back to
Overseer's /oauth/callback, and the server connects with its tools (issue 15, OAuth)."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from tests.e2e.dashboard import screenshot
from tests.mcp.fixtures.oauth_server import OAuthServers


def test_an_admin_signs_in_by_allowing_overseer_on_the_consent_page_and_the_server_connects(serve, new_page):
    with OAuthServers.in_thread() as servers:
        docs_config = McpServerConfig(type="http", url=servers.url, start_timeout=30)
        h = serve([], servers=(), mcp_servers={"docs": docs_config})
        page = new_page(h, path="#/servers")
        docs = page.locator('[data-testid="server-card"][data-server="docs"]')
        sign_in = docs.get_by_test_id("server-sign-in")
        expect(sign_in).to_have_attribute("data-sign-in", "needs-sign-in")
        expect(docs).to_have_attribute("data-state", "failing")
        expect(docs.get_by_test_id("server-error")).to_contain_text("overseer mcp login docs")

        with page.expect_popup() as opened:
            sign_in.get_by_test_id("server-sign-in-button").click()
        consent = opened.value
        expect(consent.get_by_test_id("consent-scopes")).to_contain_text("docs:read")
        consent.get_by_test_id("consent-allow").click()
        expect(consent.get_by_test_id("sign-in-result")).to_have_text("Signed in to docs")
        assert consent.url.startswith(f"{h.url}/oauth/callback?")

        expect(docs).to_have_attribute("data-state", "ready")
        expect(sign_in).to_have_attribute("data-sign-in", "signed-in")
        expect(docs.locator('[data-tool="mcp__docs__echo"]')).to_be_visible()
        screenshot(page, "server-signed-in")
        echo = h.call(h.host.pool.call("mcp__docs__echo", {"text": "hi"}, workspace=h.workspace, session_id="s"))
        assert (echo.is_error, echo.text) == (False, "echo: hi")
        assert servers.authority.registrations == 1 and servers.authority.resources == [servers.url]
