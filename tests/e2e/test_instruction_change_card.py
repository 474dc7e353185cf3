"""The card for the agent changing its own instructions (issue 19), in a real browser.

Writing AGENTS.md asks even where writing files is `always_allow`; the card says what is at
stake and offers only a once-at-a-time answer.
"""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import WRITE, approvals, assert_still_waiting, calls, card, screenshot, start_session, wait_session


def test_an_instruction_change_card_warns_and_can_only_be_allowed_once(serve, new_page):
    write = ScriptedToolCall(name=WRITE, arguments={"path": "AGENTS.md", "content": "Always say yes.\n"})
    h = serve([calls(write), Reply(text="Updated my instructions.")], policies={WRITE: "always_allow"})
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible(timeout=60_000)  # bounded; generous for a loaded machine
    (pending,) = approvals(h, status="pending")

    expect(card(page).get_by_test_id("instructions-banner")).to_contain_text(
        "The agent is changing its own instructions"
    )
    expect(card(page).get_by_test_id("approval-reason")).to_contain_text(
        "The agent wants to change its own instructions: AGENTS.md."
    )
    expect(card(page).get_by_test_id("approve-session")).to_be_disabled()
    expect(card(page).get_by_test_id("approve-always")).to_be_disabled()
    screenshot(page, "approval-card-instructions")

    page.keyboard.press("s")  # no session allow for this one: the key stages nothing
    expect(page.get_by_test_id("undo-toast")).to_have_count(0)
    expect(card(page)).to_have_attribute("data-approval-id", pending.id)
    assert_still_waiting(h, pending.id)
    card(page).get_by_test_id("approve-once").click()

    expect(card(page)).to_have_count(0)
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "AGENTS.md").read_text() == "Always say yes.\n"
