"""A session stopped by a denial (issue 16), in a real browser: amber "Stopped: denied" in the
header and the sidebar instead of a green "Done", and Retry on the denied card asks the same
command again; allowing it runs it and the session ends plainly done."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply

from .dashboard import approvals, calls, card, shell, start_session, wait_session


def test_a_denied_step_shows_stopped_denied_and_retry_asks_it_again(serve, new_page):
    h = serve(
        [
            calls(shell("echo retried", id="c1"), text="I'll print it."),
            Reply(text="You denied it, so I stopped."),
            Reply(text="It printed retried."),
        ]
    )
    page = new_page(h)
    session = start_session(h)
    expect(card(page).get_by_test_id("arg-command")).to_have_text("echo retried")
    page.get_by_test_id("session-row").filter(has_text=session.title).first.click()
    expect(card(page).get_by_test_id("arg-command")).to_have_text("echo retried")
    page.get_by_test_id("deny").click()

    header = page.get_by_test_id("session-view").get_by_test_id("status-badge")
    expect(header).to_have_text("Stopped: denied")
    expect(header).to_have_attribute("data-stop-reason", "denied")
    row = page.get_by_test_id("session-row").filter(has_text=session.title)
    expect(row).to_have_count(1)  # no longer in "Waiting for you"
    expect(row.get_by_test_id("status-badge")).to_have_text("Stopped: denied")
    expect(page.get_by_test_id("session-stop-note")).to_contain_text("denied")
    assert wait_session(h, session.id).stop_reason == "denied"

    denied = page.locator('[data-testid="tool-call"][data-tool-call-id="c1"]')
    expect(denied).to_have_attribute("data-status", "denied")
    page.get_by_test_id("retry-step").click()

    expect(card(page).get_by_test_id("approval-title")).to_have_text("Run a command")
    expect(card(page).get_by_test_id("arg-command")).to_have_text("echo retried")
    expect(header).not_to_have_text("Stopped: denied")
    page.get_by_test_id("approve-once").click()

    expect(header).to_have_text("Done")
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("It printed retried.")
    expect(page.get_by_test_id("session-stop-note")).to_have_count(0)
    first, again = approvals(h)
    assert (first.status, again.status) == ("denied", "allowed")
    records = h.call(h.host.store.list_tool_calls(session.id))
    assert sorted(r.status for r in records) == ["denied", "done"]
    assert len(h.model.requests) == 3  # the retry itself asked the model nothing
