"""Never lose a person's intent, in real Chromium (issue 16): a decision made by one key press can
be taken back before it is sent while a click goes at once, and a server that cannot be reached
is shown as such, refuses answers with a message, and everything stale loads again once it is back."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Route, WebSocketRoute, expect

from backend.testing import Reply

from .dashboard import DecisionRequests, approval, approvals, assert_still_waiting, calls, card, decided, shell, start_session, wait_session

LONG_UNDO = "window.__overseerUndoMs = 60000;"
"""A window no test outlasts: whatever is sent was sent by something other than the clock."""


def server_down(page: Page) -> None:
    """From the page's side, the server is gone: REST refused, every WebSocket closed at once."""

    def refuse(ws: WebSocketRoute) -> None:
        ws.close(code=4000, reason="down")

    page.route("**/api/**", lambda route: route.abort("connectionrefused"))
    page.route_web_socket(re.compile(r"/ws$"), refuse)
    page.evaluate("window.__overseerLive.dropForTest()")


def server_back(page: Page) -> None:
    page.unroute("**/api/**")
    page.route_web_socket(re.compile(r"/ws$"), lambda ws: ws.connect_to_server())


def test_a_key_press_decision_can_be_undone_before_it_is_sent(serve, new_page):
    h = serve([calls(shell("echo once")), Reply(text="done")])
    page = new_page(h, init_script=LONG_UNDO)
    session = start_session(h)
    expect(card(page)).to_be_focused()
    (pending,) = approvals(h, status="pending")
    posts = DecisionRequests(page)

    page.keyboard.press("y")
    expect(card(page)).to_have_count(0)  # the queue moves on at once
    toast = page.get_by_test_id("undo-toast")
    expect(toast).to_contain_text("Allowed once")
    expect(page.get_by_test_id("pending-counter")).to_have_attribute("data-count", "0")

    page.keyboard.press("z")
    expect(toast).to_have_count(0)
    expect(card(page)).to_have_attribute("data-approval-id", pending.id)
    expect(card(page)).to_be_focused()
    assert posts.sent == []
    assert_still_waiting(h, pending.id)

    page.evaluate("window.__overseerUndoMs = 300")  # now let one run out
    page.keyboard.press("n")
    expect(decided(page, pending.id)).to_contain_text("denied")
    assert [p["body"]["decision"] for p in posts.sent] == ["deny"]
    assert approval(h, pending.id).decision.kind == "deny"
    assert wait_session(h, session.id).status == "completed"


def test_a_click_is_sent_at_once_without_an_undo_window(serve, new_page):
    h = serve([calls(shell("echo clicked")), Reply(text="done")])
    page = new_page(h, init_script=LONG_UNDO)
    start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    card(page).get_by_test_id("approve-once").click()
    expect(decided(page, pending.id)).to_contain_text("allowed once")
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)


def test_a_staged_answer_is_sent_when_the_page_is_hidden(serve, new_page):
    h = serve([calls(shell("echo hidden")), Reply(text="done")])
    page = new_page(h, init_script=LONG_UNDO)
    start_session(h)
    expect(card(page)).to_be_focused()
    (pending,) = approvals(h, status="pending")
    page.keyboard.press("s")
    expect(page.get_by_test_id("undo-toast")).to_contain_text("Allowed for the session")
    page.evaluate(
        "Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    expect(decided(page, pending.id)).to_contain_text("allowed for this session")
    assert approval(h, pending.id).decision.kind == "allow_session"


def test_while_the_server_cannot_be_reached_answers_are_refused_with_a_message(serve, new_page):
    h = serve([calls(shell("echo later")), Reply(text="done")])
    page = new_page(h)
    start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")

    server_down(page)
    banner = page.get_by_test_id("connection-banner")
    expect(banner).to_contain_text("cannot be reached")
    card(page).get_by_test_id("approve-once").click()
    expect(card(page).get_by_test_id("approval-error")).to_contain_text("Not sent: Overseer's server cannot be reached")
    assert_still_waiting(h, pending.id)

    server_back(page)
    expect(banner).to_have_count(0)
    card(page).get_by_test_id("approve-once").click()
    expect(decided(page, pending.id)).to_contain_text("allowed once")


def test_a_page_loaded_while_the_server_is_down_loads_everything_once_it_is_back(serve, new_page):
    h = serve([calls(shell("echo waiting")), Reply(text="done")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()

    server_down(page)
    page.reload()
    expect(page.get_by_test_id("connection-banner")).to_contain_text("load as soon as it is back")
    expect(page.get_by_text("No sessions yet.")).to_have_count(0)  # not loaded is not empty
    expect(page.get_by_test_id("inbox")).to_contain_text("Not loaded")
    page.goto(f"{h.url}/#/s/{session.id}")  # a session opened while down
    expect(page.get_by_test_id("session-view")).to_be_visible()

    server_back(page)
    expect(page.get_by_test_id("connection-banner")).to_have_count(0)
    expect(card(page)).to_be_visible()
    expect(page.get_by_test_id("session-view")).to_contain_text("Do the scripted work")  # its transcript
    page.get_by_test_id("nav-settings").click()
    expect(page.get_by_test_id("model-save")).to_be_visible()  # who we are was loaded too (admin)


def test_an_answer_whose_response_was_lost_to_a_dropped_connection_is_sent_again_and_counts_once(serve, new_page):
    # Issue 31, item 12: the answer reached the server, its response did not; the page sends it
    # again (answers are safe to repeat) instead of saying it was not sent.
    h = serve([calls(shell("echo ran >> runs.txt")), Reply(text="done")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    posts = DecisionRequests(page)
    dropped: list[int] = []

    def lose_the_first_response(route: Route) -> None:
        if route.request.method != "POST" or dropped:
            route.continue_()
            return
        answered = route.fetch()  # the server records the answer ...
        dropped.append(answered.status)
        route.abort("connectionreset")  # ... and the page sees the connection drop

    page.route(f"**/api/approvals/{pending.id}", lose_the_first_response)
    with page.expect_response(lambda r: r.request.method == "POST" and pending.id in r.url) as retried:
        card(page).get_by_test_id("approve-once").click()
    assert retried.value.status == 200 and dropped == [200]
    expect(decided(page, pending.id)).to_contain_text("allowed once")
    expect(page.get_by_test_id("approval-error")).to_have_count(0)
    assert [p["body"]["decision"] for p in posts.sent] == ["allow_once", "allow_once"]
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "runs.txt").read_text() == "ran\n"
    assert approval(h, pending.id).decision.kind == "allow_once"
