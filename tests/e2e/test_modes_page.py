"""The Modes page in a real browser against the real server: the list with each mode's source,
overriding a built-in and resetting it, creating a mode (with the server's refusal shown first)
and deleting it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from backend.store.base import NotFound

from .dashboard import page_screenshot


def mode_row(page, name: str):
    return page.locator(f'[data-testid="mode-row"][data-mode="{name}"]')


def test_a_built_in_mode_is_overridden_from_its_form_and_reset_to_the_built_in(serve, new_page):
    h = serve([])
    builtin = h.host.modes.get("plan")
    page = new_page(h)
    page.get_by_test_id("nav-modes").click()

    for name in ("agent", "ask", "plan", "research", "review"):
        expect(mode_row(page, name).get_by_test_id("mode-source")).to_have_text("built-in")
    expect(mode_row(page, "plan")).to_contain_text(builtin.description)

    mode_row(page, "plan").click()
    form = page.get_by_test_id("mode-form")
    expect(form.get_by_test_id("mode-description")).to_have_value(builtin.description)
    expect(form.get_by_test_id("mode-tools-some")).to_be_checked()
    expect(form.get_by_test_id("mode-tools")).to_have_value("read-only")
    expect(form.get_by_test_id("mode-policies")).to_contain_text("mcp__shell__exec: deny")
    expect(form.get_by_test_id("mode-next")).to_have_value("agent")
    form.get_by_test_id("mode-description").fill("Plans, my way")
    form.get_by_test_id("mode-save").click()

    expect(page.get_by_test_id("mode-flash")).to_have_text("Saved.")
    expect(mode_row(page, "plan").get_by_test_id("mode-source")).to_have_text("overridden")
    stored = h.host.modes.get("plan")
    assert (stored.description, stored.overrides_builtin) == ("Plans, my way", True)
    assert stored.policies == builtin.policies and stored.next_mode == "agent"

    page.get_by_test_id("mode-reset").click()
    page.get_by_test_id("mode-delete-confirm").click()
    expect(mode_row(page, "plan").get_by_test_id("mode-source")).to_have_text("built-in")
    expect(page.get_by_test_id("mode-description")).to_have_value(builtin.description)
    expect(page.get_by_test_id("mode-delete")).to_have_count(0)
    assert h.host.modes.get("plan").overrides_builtin is False


def test_a_new_mode_is_refused_with_the_servers_reason_then_created_offered_and_deleted(serve, new_page):
    h = serve([])
    page = new_page(h, path="#/modes")
    page.get_by_test_id("mode-new").click()
    form = page.get_by_test_id("mode-form")
    form.get_by_test_id("mode-name").fill("docs")
    form.get_by_test_id("mode-icon").fill("D")
    form.get_by_test_id("mode-description").fill("Writes documentation only")
    form.get_by_test_id("mode-tools-some").check()
    form.get_by_test_id("mode-tools").fill("read-only\nmcp__file__write_(")
    form.get_by_test_id("mode-policies").fill("mcp__shell__exec: deny")
    form.get_by_test_id("mode-next").select_option("review")
    form.get_by_test_id("mode-prompt").fill("Write docs. Touch nothing else.")
    form.get_by_test_id("mode-save").click()

    expect(form.get_by_test_id("mode-error")).to_contain_text("tools:")
    expect(form.get_by_test_id("mode-error")).to_contain_text("mcp__file__write_(")
    expect(mode_row(page, "docs")).to_have_count(0)
    with pytest.raises(NotFound):
        h.host.modes.get("docs")

    form.get_by_test_id("mode-tools").fill("read-only\nmcp__file__*")
    form.get_by_test_id("mode-save").click()
    expect(mode_row(page, "docs").get_by_test_id("mode-source")).to_have_text("yours")
    expect(page.get_by_test_id("mode-flash")).to_have_text("Saved.")
    stored = h.host.modes.get("docs")
    assert stored.tools == ["read-only", "mcp__file__*"]
    assert stored.policies == {"mcp__shell__exec": "deny"}
    assert (stored.next_mode, stored.icon, stored.prompt) == ("review", "D", "Write docs. Touch nothing else.")
    page_screenshot(page, "modes-page")

    # The new-session form offers it at once.
    page.get_by_test_id("new-session-toggle").click()
    expect(page.get_by_test_id("new-session-mode").locator("option[value=docs]")).to_have_text("D docs")
    page.get_by_test_id("new-session-toggle").click()

    page.get_by_test_id("mode-delete").click()
    page.get_by_test_id("mode-delete-confirm").click()
    expect(mode_row(page, "docs")).to_have_count(0)
    with pytest.raises(NotFound):
        h.host.modes.get("docs")
