"""Gates and chat extras in a real browser against the real server: a plan's switch gate (read,
edit, allow), chat commands with their notices, and a `/skill` attached from the chat box."""

from __future__ import annotations

import sys

import pytest
from playwright.sync_api import expect

from backend.domain.session_options import SessionOptions
from backend.testing import Reply

from .dashboard import (
    DecisionRequests,
    approval,
    approvals,
    assert_still_waiting,
    card,
    screenshot,
    start_session,
    wait_session,
)

PLAN = "## Plan\n1. Write `notes.txt` with the summary.\n2. Run the tests."
EDITED = "## Plan\n1. Write `NOTES.md` instead, with a heading.\n2. Run the tests."


def test_an_edited_plan_is_allowed_at_the_switch_gate_and_the_agent_mode_session_receives_it(serve, new_page):
    h = serve([Reply(text=PLAN), Reply(text="Done as planned.")])
    page = new_page(h)
    page.get_by_test_id("new-session-toggle").click()
    mode = page.get_by_test_id("new-session-mode")
    expect(mode.locator("option[value=plan]")).to_have_count(1)
    expect(mode).to_have_value("agent")
    mode.select_option("plan")
    page.get_by_test_id("new-session-prompt").fill("Summarise the repo into a notes file")
    page.get_by_test_id("new-session-submit").click()

    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "plan")
    gate = card(page)
    expect(gate).to_have_attribute("data-kind", "mode_switch")
    expect(gate.get_by_test_id("approval-title")).to_have_text("Switch to agent mode and carry out this plan?")
    expect(gate.get_by_test_id("gate-text").locator("li")).to_have_count(2)
    expect(gate.get_by_test_id("gate-text")).to_contain_text("Write notes.txt with the summary.")
    # A gate is a decision about the work: no session or standing rules.
    expect(gate.get_by_test_id("approve-session")).to_have_count(0)
    expect(gate.get_by_test_id("approve-always")).to_have_count(0)
    expect(page.get_by_test_id("tool-call")).to_have_count(0)  # nor is it drawn as a tool call
    screenshot(page, "plan-gate")
    posts = DecisionRequests(page)

    gate.get_by_test_id("gate-edit").click()
    editor = gate.get_by_test_id("gate-edit-text")
    expect(editor).to_have_value(PLAN)
    editor.fill(EDITED)
    gate.get_by_test_id("gate-edit-allow").click()

    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "agent")
    expect(page.get_by_test_id("timeline-note").filter(has_text="Switched to agent mode")).to_have_count(1)
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("Done as planned.")
    expect(card(page)).to_have_count(0)

    (only,) = approvals(h)
    assert only.kind == "mode_switch" and only.status == "allowed"
    assert only.decision.updated_arguments == {"mode": "agent", "plan": EDITED}
    assert [p["body"] for p in posts.sent] == [
        {"decision": "allow_once", "updated_arguments": {"mode": "agent", "plan": EDITED}}
    ]
    assert wait_session(h, only.session_id).mode == "agent"
    last = h.model.requests[-1].last_prompt()
    assert EDITED in last and "notes.txt" not in last


def test_help_shows_its_notice_and_new_draws_a_divider_that_survives_a_reload(serve, new_page):
    h = serve([Reply(text="Hello there.")])
    session = start_session(h, prompt="Say hello")
    wait_session(h, session.id)
    page = new_page(h, path=f"#/s/{session.id}")
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Hello there.")

    composer = page.get_by_test_id("composer")
    composer.fill("/he")
    expect(page.get_by_test_id("composer-suggestion")).to_have_count(1)
    expect(page.get_by_test_id("composer-suggestion")).to_have_attribute("data-value", "/help")
    composer.press("Enter")  # completes the word
    expect(composer).to_have_value("/help")
    composer.press("Enter")  # sends it

    expect(composer).to_have_value("")
    expect(page.get_by_test_id("composer-detail")).to_contain_text("Commands:")
    notice = page.locator('[data-testid="timeline-note"][data-kind="notice"]')
    expect(notice).to_contain_text("/mode NAME")
    expect(notice).to_contain_text("/summarize")

    composer.fill("/new")
    composer.press("Enter")
    expect(page.get_by_test_id("history-cleared")).to_have_text("History cleared — the agent starts afresh here")

    page.reload()
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Hello there.")
    expect(page.get_by_test_id("history-cleared")).to_have_count(1)
    expect(page.locator('[data-testid="timeline-note"][data-kind="notice"]')).to_have_count(2)


def test_an_unknown_slash_word_is_refused_in_place_and_a_chosen_skill_is_attached_as_a_chip(serve, new_page):
    h = serve([Reply(text="Here is the summary.")])
    session = h.call(h.host.runner.create(options=SessionOptions(title="Skills")))
    page = new_page(h, path=f"#/s/{session.id}")
    composer = page.get_by_test_id("composer")

    composer.fill("/nosuch do it")
    composer.press("Enter")
    expect(page.get_by_test_id("composer-error")).to_contain_text("/nosuch is not a command or a skill")
    expect(page.get_by_test_id("composer-error")).to_contain_text("/summarize")
    expect(composer).to_have_value("/nosuch do it")

    composer.fill("/summ")
    page.locator('[data-testid="composer-suggestion"][data-value="/summarize"]').click()
    expect(composer).to_have_value("/summarize ")
    composer.press_sequentially("the README")
    composer.press("Enter")

    message = page.get_by_test_id("message-user")
    expect(message).to_contain_text("the README")
    chip = message.get_by_test_id("attachment-chip")
    expect(chip).to_have_text("skill: summarize")
    expect(message.get_by_test_id("attachment-text")).to_have_count(0)  # folded until asked for
    chip.get_by_role("button").click()
    expect(message.get_by_test_id("attachment-text")).to_contain_text("# Summarize")
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Here is the summary.")
    screenshot(page, "skill-chip")

    [sent] = [m for m in h.call(h.host.store.list_messages(session.id)) if m.role == "user"]
    assert sent.content == "the README"
    assert [(a.kind, a.name) for a in sent.attachments] == [("skill", "summarize")]


def test_denying_a_plan_with_feedback_sends_it_back_and_the_revised_plan_asks_again(serve, new_page):
    revised = "## Plan\n1. Write `notes.txt` in German.\n2. Run the tests."
    h = serve([Reply(text=PLAN), Reply(text=revised)])
    session = start_session(h, "Summarise the repo", SessionOptions(mode="plan"))
    page = new_page(h, path=f"#/s/{session.id}")
    first = card(page)
    expect(first.get_by_test_id("gate-text")).to_contain_text("Write notes.txt with the summary.")

    page.keyboard.press("r")
    reason = first.get_by_test_id("gate-reason")
    expect(reason).to_be_focused()
    reason.fill("Write it in German")
    reason.press("Enter")

    second = card(page)
    expect(second.get_by_test_id("gate-text")).to_contain_text("in German")
    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "plan")
    denied, pending = approvals(h)
    assert denied.status == "denied" and denied.decision.message == "Write it in German"
    assert pending.status == "pending" and pending.kind == "mode_switch"
    assert "Write it in German" in h.model.requests[-1].last_prompt()


# Issue 12 on a gate: a plan denied without a reason stops the agent, so Esc must only close.
GATE_PANELS = {
    "edit-the-plan": ("gate-edit-text", "e"),
    "deny-with-feedback": ("gate-reason", "r"),
}


@pytest.mark.parametrize("panel", GATE_PANELS)
def test_escape_closes_a_gate_panel_wherever_the_focus_is_and_never_denies_the_plan(serve, new_page, panel):
    h = serve([Reply(text=PLAN), Reply(text="Done as planned.")])
    session = start_session(h, "Summarise the repo", SessionOptions(mode="plan"))
    page = new_page(h, path=f"#/s/{session.id}")
    gate = card(page)
    expect(gate).to_have_attribute("data-kind", "mode_switch")
    (pending,) = approvals(h, status="pending")
    posts = DecisionRequests(page)
    shown, key = GATE_PANELS[panel]

    page.keyboard.press(key)
    expect(gate.get_by_test_id(shown)).to_be_focused()
    page.keyboard.press("Escape")
    expect(gate.get_by_test_id(shown)).to_have_count(0)
    expect(gate.get_by_test_id("approval-actions")).to_be_visible()

    page.keyboard.press(key)
    expect(gate.get_by_test_id(shown)).to_be_focused()
    gate.get_by_test_id("approval-title").click()  # the focus leaves the panel for the card
    expect(gate).to_be_focused()
    page.keyboard.press("Escape")
    expect(gate.get_by_test_id(shown)).to_have_count(0)
    expect(gate.get_by_test_id("approval-actions")).to_be_visible()

    page.keyboard.press("Escape")  # nothing open now: still nothing to decide
    expect(gate.get_by_test_id("gate-approve")).to_be_visible()
    assert_still_waiting(h, pending.id)
    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "plan")
    expect(gate.get_by_test_id("gate-deny")).to_have_attribute("aria-keyshortcuts", "N")

    # Requests leave the page in order: had an Esc denied the plan, its POST would come first.
    gate.get_by_test_id("gate-approve").click()
    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "agent")
    assert [p["body"]["decision"] for p in posts.sent] == ["allow_once"]
    assert approval(h, pending.id).decision.kind == "allow_once"
    assert wait_session(h, session.id).status == "completed"


def test_a_tool_server_that_failed_to_start_is_a_note_in_the_session_it_is_missing_from(serve, new_page):
    broken = {"broken": {"command": sys.executable, "args": ["-c", "import sys; print('no such module'); sys.exit(3)"]}}
    h = serve([Reply(text="Done without it.")], mcp_servers=broken)
    h.call(h.host.pool.wait_ready(timeout=30))  # settled: the broken one is in error
    session = start_session(h, prompt="Use the broken tools")
    wait_session(h, session.id)
    page = new_page(h, path=f"#/s/{session.id}")
    note = page.locator('[data-testid="timeline-note"][data-kind="notice"]')
    expect(note).to_contain_text("Tool server broken is not running")
    expect(page.get_by_test_id("message-assistant")).to_contain_text("Done without it.")
