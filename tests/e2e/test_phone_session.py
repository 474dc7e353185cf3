"""At phone width (390×844) in a session, the approval card's buttons are above the composer,
inside the viewport and tappable, and the deny-with-reason panel opens in view (issue 16)."""

from __future__ import annotations

from playwright.sync_api import expect

from .dashboard import calls, card, screenshot, shell, start_session

PHONE = {"width": 390, "height": 844}


def overlaps(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def in_viewport(box: dict) -> bool:
    return box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= PHONE["width"] and box["y"] + box["height"] <= PHONE["height"]


def test_at_phone_width_the_decision_buttons_sit_above_the_composer_and_in_view(serve, new_page):
    h = serve([calls(shell("ls -la"), text="Let me look around first.")])
    page = new_page(h, viewport=PHONE)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    expect(page.get_by_test_id("session-view").get_by_test_id("approval-card")).to_be_visible(timeout=30_000)

    composer = page.locator("form.composer").bounding_box()
    assert composer is not None
    for name in ("approve-once", "deny", "deny-with-reason"):
        button = card(page).get_by_test_id(name)
        button.scroll_into_view_if_needed()
        box = button.bounding_box()
        composer = page.locator("form.composer").bounding_box()
        assert box is not None and composer is not None
        assert in_viewport(box), f"{name} is outside the viewport: {box}"
        assert box["height"] >= 44, f"{name} is {box['height']}px tall"
        assert not overlaps(box, composer), f"{name} {box} sits under the composer {composer}"
        # What a tap at the button's centre reaches is the button itself, not the composer.
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('button')?.dataset.testid ?? null", [x, y])
        assert hit == name

    card(page).get_by_test_id("deny-with-reason").click()
    reason = card(page).get_by_test_id("deny-reason")
    expect(reason).to_be_focused()
    send = card(page).get_by_test_id("deny-reason-send")
    send.scroll_into_view_if_needed()
    box = send.bounding_box()
    composer = page.locator("form.composer").bounding_box()
    assert box is not None and composer is not None and in_viewport(box) and not overlaps(box, composer)


def test_at_phone_width_settings_and_sign_out_are_on_screen_and_work(serve, new_page):
    h = serve()
    page = new_page(h, viewport=PHONE)
    expect(page.get_by_test_id("inbox")).to_be_visible()
    settings, sign_out = page.get_by_test_id("nav-settings"), page.get_by_test_id("sign-out")
    for control in (settings, sign_out):
        expect(control).to_be_visible()
        box = control.bounding_box()
        assert box is not None and in_viewport(box), box
        assert box["height"] >= 28, box  # a finger can hit it
    # Nothing in the top bar runs past the screen's edge (the links scroll inside their strip).
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "phone-header")

    settings.click()
    expect(page.get_by_test_id("settings-view")).to_be_visible()
    sign_out.click()
    expect(page.get_by_test_id("login-form")).to_be_visible()
