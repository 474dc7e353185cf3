"""One truth across reconnects and tabs, in real Chromium (issue 33, items 4 and 5): a card shown
while the server was away says its diff is unavailable and fetches it again once the server is
back, dropping the stale "Not sent"; a decision made in one tab shows in every tab with who made
it, and a tab whose own answer lost is told so."""

from __future__ import annotations

import re

from playwright.sync_api import Route, expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import WRITE, approval, approvals, assert_still_waiting, calls, card, decided, screenshot, shell, start_session
from .test_never_lose_intent import LONG_UNDO, server_back, server_down

BEFORE = "".join(f"old line {i}\n" for i in range(1, 7))
AFTER = "".join(f"new line {i}\n" for i in range(1, 14))


def test_a_card_shown_while_the_server_is_away_fetches_its_diff_again_once_it_is_back(serve, new_page):
    h = serve([calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": AFTER})), Reply(text="done")])
    (h.workspace / "notes.txt").write_text(BEFORE)
    page = new_page(h, viewport={"width": 1440, "height": 900})
    session = start_session(h)
    expect(card(page).get_by_test_id("diff-del")).to_have_count(6)
    (pending,) = approvals(h, status="pending")

    server_down(page)
    expect(page.get_by_test_id("connection-banner")).to_contain_text("cannot be reached")
    page.goto(f"{h.url}/#/s/{session.id}")  # the card is shown anew while the server is away
    diff = card(page).get_by_test_id("arg-diff")
    expect(diff).to_have_attribute("data-diff", "unavailable")
    expect(diff.get_by_test_id("diff-warning")).to_contain_text("the file on disk could not be read: diff unavailable")
    expect(diff).not_to_contain_text("+13")  # not the whole file as added, hiding what it deletes
    card(page).get_by_test_id("approve-once").click()
    expect(card(page).get_by_test_id("approval-error")).to_contain_text("Not sent")
    screenshot(page, "issue33-item4-offline-diff-unavailable")

    server_back(page)
    expect(page.get_by_test_id("connection-banner")).to_have_count(0)
    expect(diff).to_have_attribute("data-diff", "shown")
    expect(card(page).get_by_test_id("diff-del")).to_have_count(6)
    expect(card(page).get_by_test_id("diff-add")).to_have_count(13)
    expect(card(page).get_by_test_id("approval-error")).to_have_count(0)
    expect(page.get_by_test_id("auto-approve-strip")).to_contain_text("Runs without asking")
    screenshot(page, "issue33-item4-reconnected-diff")
    assert_still_waiting(h, pending.id)


def test_a_decision_in_one_tab_shows_who_made_it_in_the_other_and_tells_the_answer_that_lost(serve, new_page):
    h = serve([calls(shell("echo one"), shell("echo two")), Reply(text="done")])
    first = new_page(h, init_script=LONG_UNDO)
    second = new_page(h)
    start_session(h)
    expect(first.get_by_test_id("pending-counter")).to_have_attribute("data-count", "2")
    one, two = approvals(h, status="pending")
    expect(card(first)).to_have_attribute("data-approval-id", one.id)
    expect(card(first)).to_be_focused()
    expect(card(second)).to_have_attribute("data-approval-id", one.id)

    # A deny staged by a key press in the first tab; the second tab allows before it is sent.
    first.keyboard.press("n")
    expect(first.get_by_test_id("undo-toast")).to_contain_text("Denied")
    card(second).get_by_test_id("approve-once").click()
    row = decided(first, one.id)
    expect(row).to_contain_text("allowed once by admin in another tab")
    expect(row).to_have_class(re.compile(r"\ballowed\b"))
    expect(row.get_by_test_id("decision-lost")).to_have_text(
        "Your deny was not sent: allowed once by admin in another tab first"
    )
    expect(first.get_by_test_id("undo-toast")).to_have_count(0)
    expect(decided(second, one.id)).to_contain_text("allowed once")
    expect(decided(second, one.id)).not_to_contain_text("another tab")  # its own answer

    # A deny clicked in the first tab reaches the server after the second tab's allow: a 409.
    held: list[Route] = []
    first.route(
        f"**/api/approvals/{two.id}",
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    expect(card(first)).to_have_attribute("data-approval-id", two.id)
    with first.expect_request(lambda r: r.method == "POST" and two.id in r.url):
        card(first).get_by_test_id("deny").click()
    expect(card(second)).to_have_attribute("data-approval-id", two.id)
    card(second).get_by_test_id("approve-once").click()
    expect(decided(second, two.id)).to_contain_text("allowed once")
    assert len(held) == 1
    held[0].continue_()
    row = decided(first, two.id)
    expect(row).to_contain_text("allowed once by admin in another tab")
    expect(row).to_have_class(re.compile(r"\ballowed\b"))
    expect(row).not_to_contain_text("already answered elsewhere")
    expect(row.get_by_test_id("decision-lost")).to_have_text(
        "Your deny was not recorded: allowed once by admin in another tab first"
    )
    screenshot(first, "issue33-item5-lost-deny")
    assert approval(h, one.id).decision.kind == "allow_once"
    assert approval(h, two.id).decision.kind == "allow_once"
