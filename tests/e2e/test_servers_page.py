"""The Servers page in real Chromium: live state and tools without a reload, and an admin adding
and removing a server (issue 15, "Managing servers from the dashboard"; issue 14, item 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from playwright.sync_api import Page, expect

from backend.auth import Authenticator
from backend.mcp.config import McpServerConfig
from tests.e2e.dashboard import page_screenshot

FIXTURES = Path(__file__).resolve().parents[1] / "mcp" / "fixtures"
FEATURES = McpServerConfig(command=sys.executable, args=[str(FIXTURES / "client_features_server.py")])
ECHO_SERVER = FIXTURES / "echo_server.py"


def card(page: Page, name: str):
    return page.locator(f'[data-testid="server-card"][data-server="{name}"]')


def mark_document(page: Page) -> None:
    """Tag this document, so a test can tell that the page was never reloaded."""
    page.evaluate("window.__notReloaded = true")


def assert_not_reloaded(page: Page) -> None:
    assert page.evaluate("window.__notReloaded === true")


def test_a_tool_the_server_adds_shows_on_the_servers_page_without_a_reload(serve, new_page):
    h = serve([], servers=(), mcp_servers={"feat": FEATURES})
    page = new_page(h, path="#/servers")
    feat = card(page, "feat")
    expect(feat).to_have_attribute("data-state", "ready")
    expect(feat.locator('[data-tool="mcp__feat__add_tool"]')).to_be_visible()
    expect(feat.locator('[data-tool="mcp__feat__late"]')).to_have_count(0)
    mark_document(page)

    added = h.call(h.host.pool.call("mcp__feat__add_tool", {"name": "late"}, workspace=h.workspace, session_id="s"))
    assert not added.is_error, added.text

    late = feat.locator('[data-tool="mcp__feat__late"]')
    expect(late).to_be_visible()
    expect(late).to_contain_text("Added at run time as late.")
    expect(late.get_by_test_id("tool-policy")).to_have_text("ask (default)")
    assert_not_reloaded(page)


def test_an_admin_adds_a_server_on_the_page_sees_it_start_and_removes_it(serve, new_page):
    h = serve([], servers=())
    page = new_page(h, path="#/servers")
    expect(page.get_by_test_id("servers-view")).to_be_visible()
    mark_document(page)

    page.get_by_test_id("server-add").click()
    page.get_by_test_id("server-form-name").fill("echo")
    page.get_by_test_id("server-form-command").fill(sys.executable)
    page.get_by_test_id("server-form-args").fill(str(ECHO_SERVER))
    page.get_by_test_id("server-form-env").fill("FLAVOUR=plain")
    page.get_by_test_id("server-form-save").click()

    echo = card(page, "echo")
    expect(echo).to_have_attribute("data-state", "ready")
    expect(echo.locator('[data-tool="mcp__echo__echo"]')).to_be_visible()
    config_file = h.host.settings.writable_config_file
    written = yaml.safe_load(config_file.read_text())["mcpServers"]["echo"]
    assert written == {"command": sys.executable, "args": [str(ECHO_SERVER)], "env": {"FLAVOUR": "plain"}}

    echo.get_by_test_id("server-log-toggle").click()
    expect(echo.get_by_test_id("server-log")).to_contain_text("echo server starting")
    page_screenshot(page, "servers-page")

    echo.get_by_test_id("server-remove").click()
    echo.get_by_test_id("server-remove-confirm").click()
    expect(echo).to_have_count(0)
    assert "echo" not in (yaml.safe_load(config_file.read_text())["mcpServers"] or {})
    assert h.host.pool.config_of("echo") is None
    assert_not_reloaded(page)


def test_a_server_that_cannot_start_shows_as_failing_with_its_error(serve, new_page):
    h = serve([], servers=())
    page = new_page(h, path="#/servers")
    page.get_by_test_id("server-add").click()
    page.get_by_test_id("server-form-name").fill("broken")
    page.get_by_test_id("server-form-command").fill("/nonexistent/overseer-test-server")
    page.get_by_test_id("server-form-save").click()

    broken = card(page, "broken")
    expect(broken).to_have_attribute("data-state", "failing")
    expect(broken.get_by_test_id("server-error")).to_contain_text("MCP server 'broken'")


def test_a_built_in_name_is_refused_with_the_hosts_message(serve, new_page):
    h = serve([], servers=())
    page = new_page(h, path="#/servers")
    page.get_by_test_id("server-add").click()
    page.get_by_test_id("server-form-name").fill("memory")
    page.get_by_test_id("server-form-command").fill(sys.executable)
    page.get_by_test_id("server-form-save").click()

    expect(page.get_by_test_id("server-form-error")).to_contain_text("memory-server")
    expect(card(page, "memory")).to_have_attribute("data-state", "disabled")  # the built-in, switched off
    assert h.host.pool.config_of("memory") is None


def test_an_edit_on_the_page_keeps_hidden_values_and_restarts_the_server_with_the_new_ones(serve, new_page):
    h = serve([], servers=())
    entry = {"command": sys.executable, "args": [str(ECHO_SERVER)], "env": {"TOKEN": "s3cret-value"}, "call_timeout": 60}
    h.call(h.host.servers.add("echo", entry))
    page = new_page(h, path="#/servers")
    echo = card(page, "echo")
    expect(echo).to_have_attribute("data-state", "ready")

    echo.get_by_test_id("server-edit").click()
    env = page.get_by_test_id("server-form-env")
    expect(env).to_have_value("TOKEN=********")  # the secret never reaches the page
    env.fill("TOKEN=********\nFLAVOUR=new")
    page.get_by_test_id("server-form-save").click()
    expect(page.get_by_test_id("server-form")).to_have_count(0)

    flavour = h.call(h.host.pool.call("mcp__echo__getenv", {"name": "FLAVOUR"}, workspace=h.workspace, session_id="s"))
    token = h.call(h.host.pool.call("mcp__echo__getenv", {"name": "TOKEN"}, workspace=h.workspace, session_id="s"))
    assert (flavour.text, token.text) == ("new", "s3cret-value")
    written = yaml.safe_load(h.host.settings.writable_config_file.read_text())["mcpServers"]["echo"]
    assert written == {**entry, "env": {"TOKEN": "s3cret-value", "FLAVOUR": "new"}}  # call_timeout kept

    echo.get_by_test_id("server-toggle").click()
    expect(echo).to_have_attribute("data-state", "disabled")
    assert h.host.pool.config_of("echo") is None
    echo.get_by_test_id("server-toggle").click()
    expect(echo).to_have_attribute("data-state", "ready")


def test_a_viewer_sees_servers_live_but_no_controls_to_change_them(serve, browser):
    h = serve([], servers=(), mcp_servers={"feat": FEATURES})
    key = Authenticator(data_dir=h.data_dir, token=h.token, users=[]).create_api_key("watcher", role="viewer")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{h.url}/login?token={key}")
        expect(page.get_by_test_id("pending-counter")).to_be_visible()
        page.goto(f"{h.url}/#/servers")
        feat = card(page, "feat")
        expect(feat).to_have_attribute("data-state", "ready")
        expect(page.get_by_test_id("servers-view")).to_contain_text("Only admins can change servers.")
        h.call(h.host.pool.call("mcp__feat__add_tool", {"name": "seen"}, workspace=h.workspace, session_id="s"))
        expect(feat.locator('[data-tool="mcp__feat__seen"]')).to_be_visible()
        for control in ("server-add", "server-restart", "server-edit", "server-toggle", "server-remove"):
            expect(page.get_by_test_id(control)).to_have_count(0)
    finally:
        context.close()


def test_a_server_added_below_the_fold_is_brought_into_view_and_one_that_cannot_be_reached_says_so(serve, new_page):
    # Issue 33, item 14: "Add and start" left the new server unseen at the page's end, and a
    # remote server whose name does not resolve was badged "Not signed in".
    h = serve([])
    page = new_page(h, path="#/servers", viewport={"width": 1024, "height": 500})
    expect(page.get_by_test_id("server-card").first).to_be_visible()
    page.get_by_test_id("server-add").click()
    page.get_by_test_id("server-form-name").fill("faraway")
    page.get_by_test_id("server-form-type").select_option("http")
    page.get_by_test_id("server-form-url").fill("http://no-such-host.invalid/mcp")
    page.get_by_test_id("server-form-save").click()

    faraway = card(page, "faraway")
    expect(faraway).to_be_in_viewport()
    expect(faraway).to_be_focused()
    expect(faraway.get_by_test_id("server-sign-in-state")).to_have_text("Unreachable: name not found")
    page_screenshot(page, "servers-added-unreachable")
