"""Rename, archive and search sessions in the sidebar, in real Chromium against the real server.

Each change is checked in the store too, and a second dashboard sees it live (`session.updated`).
"""

from __future__ import annotations

import threading

from playwright.sync_api import Locator, Page, expect

from backend.domain.session_options import SessionOptions
from backend.testing import Reply

from .dashboard import calls, shell, start_session, wait_session


def row(page: Page | Locator, session_id: str):
    return page.locator(f'[data-testid="session-row"][data-session-id="{session_id}"]')


def menu_of(page: Page, session_id: str):
    return page.locator("li.session-item").filter(has=row(page, session_id)).get_by_test_id("session-menu")


def stored(h, session_id: str):
    return h.call(h.host.store.get_session(session_id))


def test_a_double_click_renames_in_place_and_another_dashboard_sees_it_live(serve, new_page):
    h = serve([])
    session = h.call(h.host.runner.create(options=SessionOptions(title="Old name")))
    page = new_page(h)
    watcher = new_page(h)
    expect(row(watcher, session.id)).to_contain_text("Old name")

    row(page, session.id).locator(".session-title").dblclick()
    field = page.get_by_test_id("rename-input")
    expect(field).to_be_focused()
    field.fill("Quarterly report")
    field.press("Enter")

    expect(row(page, session.id)).to_contain_text("Quarterly report")
    expect(row(watcher, session.id)).to_contain_text("Quarterly report")
    assert stored(h, session.id).title == "Quarterly report"


def test_the_menu_renames_escape_takes_it_back_and_an_empty_title_is_refused(serve, new_page):
    h = serve([])
    session = h.call(h.host.runner.create(options=SessionOptions(title="Keep me")))
    page = new_page(h)

    menu_of(page, session.id).click()
    page.get_by_test_id("session-rename").click()
    field = page.get_by_test_id("rename-input")
    field.fill("Throw this away")
    field.press("Escape")
    expect(row(page, session.id)).to_contain_text("Keep me")

    menu_of(page, session.id).click()
    page.get_by_test_id("session-rename").click()
    field = page.get_by_test_id("rename-input")
    field.fill("   ")
    field.press("Enter")
    expect(page.get_by_test_id("rename-error")).to_contain_text("a title cannot be empty")
    field.press("Escape")
    expect(row(page, session.id)).to_contain_text("Keep me")
    assert stored(h, session.id).title == "Keep me"


def test_archived_sessions_hide_until_show_archived_and_unarchive_brings_them_back(serve, new_page):
    h = serve([])
    kept = h.call(h.host.runner.create(options=SessionOptions(title="Still here")))
    old = h.call(h.host.runner.create(options=SessionOptions(title="Done with this")))
    page = new_page(h)
    watcher = new_page(h)

    menu_of(page, old.id).click()
    page.get_by_test_id("session-archive").click()
    expect(row(page, old.id)).to_have_count(0)
    expect(row(watcher, old.id)).to_have_count(0)  # live, in the other dashboard too
    expect(row(page, kept.id)).to_be_visible()
    assert stored(h, old.id).archived is True

    page.get_by_test_id("show-archived").check()
    expect(row(page, old.id).get_by_test_id("archived-badge")).to_be_visible()
    menu_of(page, old.id).click()
    page.get_by_test_id("session-unarchive").click()
    expect(row(page, old.id).get_by_test_id("archived-badge")).to_have_count(0)
    page.get_by_test_id("show-archived").uncheck()
    expect(row(page, old.id)).to_be_visible()
    assert stored(h, old.id).archived is False


def test_a_session_that_is_still_working_is_not_archived_and_the_menu_says_why(serve, new_page):
    h = serve([calls(shell("echo waiting"))])
    session = start_session(h)
    page = new_page(h)
    assert stored(h, session.id).status in ("running", "waiting_approval")

    menu_of(page, session.id).first.click()
    page.get_by_test_id("session-archive").click()
    expect(page.get_by_test_id("session-menu-error")).to_contain_text("stop it or let it finish")
    assert stored(h, session.id).archived is False
    h.call(h.host.runner.stop(session.id))


def _held_until_it_asks(serve, new_page):
    """A session whose model answer is held (listed under "Sessions", running) until `release`
    is set; then it asks to run a command and moves to "Waiting for you"."""
    release = threading.Event()
    h = serve([Reply(tool_calls=[shell("echo waiting")], hang_after_chunks=1, release=release)])
    page = new_page(h)
    session = start_session(h)
    h.model.wait_for_requests(1, timeout=60)
    expect(row(page.get_by_test_id("session-list"), session.id)).to_be_visible()
    return h, page, session, release


def test_an_open_menu_stays_open_with_its_error_when_the_session_moves_to_waiting_for_you(serve, new_page):
    h, page, session, release = _held_until_it_asks(serve, new_page)
    try:
        menu_of(page, session.id).click()
        expect(page.get_by_test_id("session-archive")).to_be_visible()
    finally:
        release.set()
    expect(row(page.get_by_test_id("waiting-group"), session.id)).to_be_visible()
    expect(page.get_by_test_id("session-archive")).to_be_visible()  # drawn anew there, still open
    page.get_by_test_id("session-archive").click()
    expect(page.get_by_test_id("session-menu-error")).to_contain_text("stop it or let it finish")
    h.call(h.host.runner.stop(session.id))
    expect(row(page.get_by_test_id("session-list"), session.id)).to_be_visible()
    expect(page.get_by_test_id("session-archive")).to_be_visible()  # and back again


def test_a_title_being_typed_survives_the_session_moving_to_waiting_for_you(serve, new_page):
    h, page, session, release = _held_until_it_asks(serve, new_page)
    try:
        row(page, session.id).locator(".session-title").dblclick()
        page.get_by_test_id("rename-input").fill("Half a new na")
    finally:
        release.set()
    waiting = page.get_by_test_id("waiting-group")
    expect(waiting.get_by_test_id("rename-input")).to_have_value("Half a new na")
    waiting.get_by_test_id("rename-input").press("End")
    waiting.get_by_test_id("rename-input").press_sequentially("me")
    waiting.get_by_test_id("rename-input").press("Enter")
    expect(row(waiting, session.id)).to_contain_text("Half a new name")
    assert stored(h, session.id).title == "Half a new name"
    h.call(h.host.runner.stop(session.id))


def test_search_finds_a_session_by_what_was_said_in_it(serve, new_page):
    h = serve([Reply(text="Zebras have stripes.")])
    spoken = start_session(h, "tell me about zebras", SessionOptions(title="Animal facts"))
    wait_session(h, spoken.id, timeout=60)
    other = h.call(h.host.runner.create(options=SessionOptions(title="Groceries")))
    page = new_page(h)
    expect(row(page, other.id)).to_be_visible()

    page.get_by_test_id("session-filter").fill("STRIPES")  # only in the agent's answer
    expect(row(page, spoken.id)).to_be_visible()
    expect(row(page, other.id)).to_have_count(0)
    page.get_by_test_id("session-filter").fill("")
    expect(row(page, other.id)).to_be_visible()
