"""A key decides only a card whose buttons the person can see (issue 33, item 2).

At 1440×900 and 1024×768 in a session with a long transcript: a new request is scrolled into view
with its buttons clear of the sticky top bar and of the composer, without taking the focus from
the composer being typed in; Y on a card whose buttons are off screen decides nothing, scrolls
them into view and says to press again; the next Y decides.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .dashboard import ARTIFACTS, approval, assert_still_waiting, calls, decided, shell, start_session

WIDE = {"width": 1440, "height": 900}
LAPTOP = {"width": 1024, "height": 768}
LONG = "\n\n".join(f"Paragraph {i}: what I looked at and why it matters for the next step." for i in range(40))


def screenshot(page: Page, name: str) -> None:
    """What the person sees (the viewport, not the full page), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def overlaps(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def buttons_seen(page: Page) -> bool:
    """The focused card's decision buttons lie wholly between the top bar and the viewport's
    bottom, and do not meet the composer."""
    view = page.viewport_size
    buttons = page.get_by_test_id("session-view").get_by_test_id("approval-actions").bounding_box()
    top = page.locator(".topbar").bounding_box()
    composer = page.locator("form.composer").bounding_box()
    assert view and buttons and top and composer
    inside = buttons["y"] >= top["y"] + top["height"] and buttons["y"] + buttons["height"] <= view["height"]
    return inside and not overlaps(buttons, composer)


def next_request(page: Page, h, previous: str | None) -> str:
    """The id of the request that the session view's card shows once `previous` is decided."""
    card = page.get_by_test_id("session-view").get_by_test_id("approval-card")
    expect(card).to_have_count(1)
    if previous:
        expect(card).not_to_have_attribute("data-approval-id", previous)
    shown = card.get_attribute("data-approval-id")
    assert shown and approval(h, shown).status == "pending"
    return shown


def y_on_a_card_scrolled_away_only_brings_it_into_view(page: Page, h, approval_id: str, name: str) -> None:
    page.evaluate("window.scrollTo(0, 0)")
    assert not buttons_seen(page), "the test needs the buttons below the fold"
    page.keyboard.press("y")
    expect(page.get_by_test_id("press-again")).to_have_text("The request is now in view: press again to decide.")
    assert_still_waiting(h, approval_id)
    assert buttons_seen(page)
    screenshot(page, f"issue33-item2-{name}-press-again")
    page.keyboard.press("y")
    expect(decided(page, approval_id)).to_contain_text("allowed once")
    assert approval(h, approval_id).status == "allowed"


def test_a_key_decides_only_a_card_whose_buttons_are_on_screen_and_new_requests_come_into_view(serve, new_page):
    h = serve(
        [
            calls(shell("echo first"), text=LONG),
            calls(shell("echo second"), text=LONG),
            calls(shell("echo third"), text=LONG),
            calls(shell("echo fourth"), text=LONG),
        ]
    )
    page = new_page(h, viewport=WIDE)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")

    # 1440×900: the new request is in view, its buttons above the composer.
    first = next_request(page, h, None)
    expect(page.get_by_test_id("session-view").get_by_test_id("approve-once")).to_be_in_viewport()
    assert buttons_seen(page)
    screenshot(page, "issue33-item2-1440-new-request")
    y_on_a_card_scrolled_away_only_brings_it_into_view(page, h, first, "1440")

    # 1024×768: the same with Y, then a request that arrives while the person types a message.
    page.set_viewport_size(LAPTOP)
    second = next_request(page, h, first)
    y_on_a_card_scrolled_away_only_brings_it_into_view(page, h, second, "1024")
    third = next_request(page, h, second)
    composer = page.get_by_test_id("composer")
    composer.fill("a draft")
    composer.focus()
    page.evaluate("window.scrollTo(0, 0)")
    # A click that moves no focus: the next request arrives while the composer has it.
    page.get_by_test_id("session-view").get_by_test_id("approve-once").dispatch_event("click")
    fourth = next_request(page, h, third)
    expect(page.get_by_test_id("session-view").get_by_test_id("approve-once")).to_be_in_viewport()
    assert buttons_seen(page)
    expect(composer).to_be_focused()
    expect(composer).to_have_value("a draft")
    screenshot(page, "issue33-item2-1024-new-request-while-typing")
    assert approval(h, fourth).status == "pending"
