"""Settings names the rules that cover no tool here (issue 35, item 12), at 1440×900.

A pasted `deny: mcp__memory__delete_entities` kept (as intended) after the memory server was
renamed, and an allow for a server that is not configured, show as warnings above the rules
table. A deny rule the admin adds for a tool the file server does not have shows at once as an
error; removing it clears it.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .dashboard import ARTIFACTS

WIDE = {"width": 1440, "height": 900}
STALE_DENY = "mcp__memory__delete_entities"


def screenshot(page: Page, name: str) -> None:
    """What the person sees at 1440×900 (the viewport), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_settings_list_the_rules_that_cover_nothing_and_a_new_deny_for_a_missing_tool_is_an_error(serve, new_page):
    h = serve(
        None,
        permissions={"deny": [STALE_DENY], "allow": ["mcp__github__list_issues", "mcp__file__read_file"]},
        deny_unmatched_ok=[STALE_DENY],
    )
    page: Page = new_page(h, viewport=WIDE)
    page.goto(f"{h.url}/#/settings")
    rules = page.get_by_test_id("rules-section")
    panel = rules.get_by_test_id("rule-warnings")
    expect(panel.get_by_test_id("rule-warning")).to_have_count(2)
    expect(panel).to_contain_text("2 rules cover no tool here")
    expect(panel.locator("[data-level=warning]", has_text=STALE_DENY)).to_contain_text("no MCP server is named 'memory'")
    expect(panel.locator("[data-level=warning]", has_text="mcp__github__list_issues")).to_contain_text(
        "no MCP server is named 'github'"
    )
    expect(panel.locator("[data-level=error]")).to_have_count(0)

    rules.get_by_test_id("rule-effect").select_option("deny")
    rules.get_by_test_id("rule-input").fill("mcp__file__delete_tree")
    rules.get_by_test_id("rule-add").click()
    error = panel.locator("[data-level=error]")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("deny rule 'mcp__file__delete_tree' (user) covers nothing: server 'file' has no tool 'delete_tree'")
    expect(error).to_contain_text("deny_unmatched_ok")
    expect(panel).to_contain_text("(1 deny rule: nothing is denied by it)")
    panel.scroll_into_view_if_needed()
    box, view = panel.bounding_box(), page.viewport_size
    assert box and view and box["x"] >= 0 and box["x"] + box["width"] <= view["width"]  # no sideways overflow
    screenshot(page, "issue35-item12-settings-rule-warnings")

    rules.get_by_role("button", name="Remove deny rule mcp__file__delete_tree").click()
    expect(panel.locator("[data-level=error]")).to_have_count(0)
    expect(panel.get_by_test_id("rule-warning")).to_have_count(2)
