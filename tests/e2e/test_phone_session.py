"""At phone width (390×844) in a session, the approval card's buttons are above the composer,
inside the viewport and tappable, and the deny-with-reason panel opens in view (issue 16); the
card waits for its transcript, so its buttons do not jump under a finger when the transcript lands."""

from __future__ import annotations

from playwright.sync_api import Page, Route, expect

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


def tap_target(page: Page, name: str) -> tuple[dict, dict, str | None]:
    """The button's box, the composer's box and which button a tap at the button's centre
    reaches, all read in one frame (read in separate calls, a re-render between them mixes two
    layouts)."""
    return page.evaluate(
        """(name) => {
            const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; };
            const button = document.querySelector(`[data-testid="approval-card"] [data-testid="${name}"]`);
            const b = box(button);
            const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
            return [b, box(document.querySelector("form.composer")), hit?.closest("button")?.dataset.testid ?? null];
        }""",
        name,
    )


def test_at_phone_width_the_decision_buttons_sit_above_the_composer_and_in_view(serve, new_page):
    h = serve([calls(shell("ls -la"), text="Let me look around first.")])
    page = new_page(h, viewport=PHONE)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    expect(page.get_by_test_id("session-view").get_by_test_id("approval-card")).to_be_visible(timeout=30_000)

    for name in ("approve-once", "deny", "deny-with-reason"):
        card(page).get_by_test_id(name).scroll_into_view_if_needed()
        box, composer, hit = tap_target(page, name)
        assert in_viewport(box), f"{name} is outside the viewport: {box}"
        assert box["height"] >= 44, f"{name} is {box['height']}px tall"
        assert not overlaps(box, composer), f"{name} {box} sits under the composer {composer}"
        assert hit == name, f"a tap at the centre of {name} {box} reaches {hit}"

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


def test_a_request_waits_for_its_transcript_so_its_buttons_do_not_move_under_a_finger(serve, new_page):
    h = serve([calls(shell("ls -la"), text="Let me look around first.")])
    page = new_page(h, viewport=PHONE)
    session = start_session(h)
    expect(card(page)).to_be_visible(timeout=30_000)  # the inbox knows the request

    # The transcript's request is held until released (one the handler has not seen yet by then
    # goes straight on): it cannot complete before.
    held: list[Route] = []
    released: list[bool] = []

    def hold(route: Route) -> None:
        if route.request.method == "GET" and not released:
            held.append(route)
        else:
            route.continue_()

    page.route(f"**/api/sessions/{session.id}", hold)
    page.goto(f"{h.url}/#/s/{session.id}")
    view = page.get_by_test_id("session-view")
    expect(view.get_by_test_id("transcript-loading")).to_be_visible()
    assert view.get_by_test_id("approval-card").count() == 0

    released.append(True)
    for route in held:
        route.continue_()
    expect(view.get_by_test_id("approval-card")).to_be_visible()
    expect(view.get_by_test_id("transcript")).to_contain_text("ls -la")
    expect(view.get_by_test_id("transcript-loading")).to_have_count(0)


def test_a_transcript_that_fails_to_load_says_so_and_still_shows_the_request(serve, new_page):
    h = serve([calls(shell("ls -la"), text="Let me look around first.")])
    page = new_page(h, viewport=PHONE)
    session = start_session(h)
    expect(card(page)).to_be_visible(timeout=30_000)

    page.route(
        f"**/api/sessions/{session.id}",
        lambda route: route.fulfill(status=503, json={"detail": "the store is not answering"}) if route.request.method == "GET" else route.continue_(),
    )
    page.goto(f"{h.url}/#/s/{session.id}")
    view = page.get_by_test_id("session-view")
    expect(view.get_by_test_id("transcript-error")).to_contain_text("The transcript could not be loaded")
    expect(view.get_by_test_id("approval-card")).to_be_visible()
