"""A failing MCP server is shown in the top bar, not repeated in every session (issue 33, item 14).

Its notice used to be a message in every new session; now a session hears of it once, and the
Servers link carries a mark on every page while the server fails, naming it and why.
"""

from __future__ import annotations

import sys

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig

from .dashboard import ARTIFACTS

BROKEN = McpServerConfig(
    command=sys.executable,
    args=["-c", "import sys; print('boom: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)"],
)


def test_the_servers_link_marks_a_failing_server_on_every_page_and_the_header_still_fits(serve, new_page):
    h = serve([], servers=("file",), mcp_servers={"broken": BROKEN})
    page = new_page(h, viewport={"width": 1024, "height": 768})
    mark = page.get_by_test_id("nav-servers-failing")
    expect(mark).to_have_attribute("data-count", "1")
    [broken] = [s for s in h.host.pool.statuses() if s.name == "broken"]
    assert broken.state == "error" and broken.error
    expect(mark).to_have_attribute("title", "Failing, their tools are left out:\nbroken: " + broken.error.split("\n")[0].strip())
    expect(page.get_by_test_id("nav-servers")).to_contain_text("⚠ 1")
    expect(page.get_by_test_id("nav-servers")).to_have_accessible_name("Servers (broken is failing)")
    expect(page.get_by_test_id("sign-out")).to_be_in_viewport(ratio=1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "issue33-item14-failing-server-mark-1024.png"))
    page.goto(f"{h.url}/#/settings")
    expect(mark).to_be_visible()  # on every page
    page.get_by_test_id("nav-servers").click()
    expect(page.get_by_test_id("servers-view")).to_contain_text("boom: GITHUB_TOKEN is not set")
