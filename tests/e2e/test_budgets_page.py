"""Budgets changed in the dashboard (issue 33, item 14): they could be raised only in the config
file. Settings → Spend shows the budgets in force; an admin changes them there, they are written to
the config file and checked from the next model call; a viewer sees them but cannot change them.
At 1440×900, 1024×768 and 390×844, with screenshots under tests/artifacts/."""

from __future__ import annotations

import pytest
import yaml
from playwright.sync_api import Page, expect

from backend.auth import Authenticator
from backend.domain.models import Usage
from backend.domain.session_options import SessionOptions
from backend.testing import Reply

from .dashboard import ARTIFACTS

VIEWPORTS = {"1440": {"width": 1440, "height": 900}, "1024": {"width": 1024, "height": 768}, "390": {"width": 390, "height": 844}}


def screenshot(page: Page, name: str) -> None:
    """What the person sees (the viewport, not the full page), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def assert_within_width(page: Page, test_id: str) -> None:
    """The element lies wholly inside the viewport's width (nothing cut off or scrolled sideways)."""
    box = page.get_by_test_id(test_id).bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"], (test_id, box)


@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_an_admin_raises_the_budgets_in_settings_and_they_are_saved_and_in_force(serve, new_page, width):
    h = serve([Reply(text="Going on within the new budget.")], budget={"per_session_usd": 0.5})
    session = h.call(h.host.runner.create(options=SessionOptions(title="budgeted")))
    h.call(h.host.runner.add_usage(session.id, Usage(cost_usd=0.6)))
    page = new_page(h, viewport=VIEWPORTS[width], path="#/settings")
    form = page.get_by_test_id("budgets-form")
    form.scroll_into_view_if_needed()
    per_session, daily = page.get_by_test_id("budget-per-session"), page.get_by_test_id("budget-daily")
    expect(per_session).to_have_value("0.50")
    expect(daily).to_have_value("")
    expect(page.get_by_test_id("budgets-save")).to_be_disabled()  # nothing changed yet
    for field in ("budget-per-session", "budget-daily", "budgets-save"):
        assert_within_width(page, field)
    screenshot(page, f"issue33-item14-budgets-{width}-before")

    per_session.fill("-3")
    expect(page.get_by_test_id("budget-per-session-error")).to_contain_text("above 0")
    expect(page.get_by_test_id("budgets-save")).to_be_disabled()
    per_session.fill("2")
    daily.fill("$10")
    page.get_by_test_id("budgets-save").click()
    saved = page.get_by_test_id("budgets-saved")
    expect(saved).to_contain_text(str(h.host.settings.writable_config_file))
    expect(saved).to_contain_text("in force from the next model call")
    assert_within_width(page, "budgets-saved")  # a long path wraps
    expect(page.get_by_test_id("spend-section")).to_contain_text("of $10.00 a day")
    expect(page.get_by_test_id("spend-section")).to_contain_text("each session up to $2.00")
    screenshot(page, f"issue33-item14-budgets-{width}-saved")

    written = yaml.safe_load(h.host.settings.writable_config_file.read_text())
    assert written["budget"] == {"per_session_usd": 2.0, "daily_usd": 10.0}
    limits = h.host.budget.limits
    assert (limits.per_session_usd, limits.daily_usd) == (2.0, 10.0)
    # In force at once: the session past its old $0.50 goes on.
    h.call(h.host.runner.send(session.id, "go on"))
    done = h.call(h.host.runner.wait(session.id, timeout=30))
    assert (done.status, done.stop_reason) == ("completed", None)

    page.reload()
    expect(page.get_by_test_id("budget-per-session")).to_have_value("2.00")
    expect(page.get_by_test_id("budget-daily")).to_have_value("10.00")


def test_clearing_both_budgets_removes_the_limits(serve, new_page):
    h = serve([], budget={"per_session_usd": 0.5, "daily_usd": 3})
    page = new_page(h, viewport=VIEWPORTS["1440"], path="#/settings")
    page.get_by_test_id("budget-per-session").fill("")
    page.get_by_test_id("budget-daily").fill("")
    page.get_by_test_id("budgets-save").click()
    expect(page.get_by_test_id("spend-no-budget")).to_be_visible()
    assert not h.host.budget.active
    assert "budget" not in (yaml.safe_load(h.host.settings.writable_config_file.read_text()) or {})


def test_a_viewer_sees_the_budgets_but_cannot_change_them(serve, browser):
    h = serve([], budget={"per_session_usd": 0.5})
    key = Authenticator(data_dir=h.data_dir, token=h.token, users=[]).create_api_key("watcher", role="viewer")
    context = browser.new_context(viewport=VIEWPORTS["390"])
    try:
        page = context.new_page()
        page.goto(f"{h.url}/login?token={key}")
        expect(page.get_by_test_id("pending-counter")).to_be_visible()
        page.goto(f"{h.url}/#/settings")
        form = page.get_by_test_id("budgets-form")
        form.scroll_into_view_if_needed()
        expect(page.get_by_test_id("budget-per-session")).to_have_value("0.50")
        expect(page.get_by_test_id("budget-per-session")).to_be_disabled()
        expect(page.get_by_test_id("budget-daily")).to_be_disabled()
        expect(page.get_by_test_id("budgets-save")).to_have_count(0)
        expect(form).to_contain_text("Only an admin can change the budgets.")
        screenshot(page, "issue33-item14-budgets-390-viewer")
    finally:
        context.close()
