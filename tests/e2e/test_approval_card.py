"""The approval card in a real browser against the real server (UX.md section 6, checks 1-7).

Each test scripts the model, lets the engine ask through the real gate, answers in the page, and
checks the outcome in the store, not only on screen.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from backend.auth import Authenticator
from backend.domain.models import StandingScope
from backend.testing import Reply, ScriptedToolCall

from .dashboard import (
    EDIT,
    FETCH,
    FETCH_SERVER,
    SHELL,
    WRITE,
    DecisionRequests,
    approval,
    approvals,
    assert_still_waiting,
    calls,
    card,
    decided,
    screenshot,
    shell,
    start_session,
    tool_calls,
    wait_session,
)


def test_y_allows_the_older_of_two_requests_and_focus_moves_to_the_other(serve, new_page):
    h = serve([calls(shell("echo first"), shell("echo second"))])
    page = new_page(h)
    start_session(h)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 2")
    older, newer = approvals(h, status="pending")
    expect(card(page)).to_have_attribute("data-approval-id", older.id)
    expect(page.get_by_test_id("approval-compact")).to_have_attribute("data-approval-id", newer.id)

    page.keyboard.press("y")

    expect(card(page)).to_have_attribute("data-approval-id", newer.id)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 1")
    expect(decided(page, older.id)).to_contain_text("Run a command — allowed once")
    answered = approval(h, older.id)
    assert answered.status == "allowed" and answered.decision.kind == "allow_once"
    assert approval(h, newer.id).status == "pending"


def test_r_opens_a_reason_box_and_enter_sends_a_deny_carrying_that_message(serve, new_page):
    h = serve([calls(shell("psql prod -c 'select 1'")), Reply(text="Understood, staging it is.")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()

    page.keyboard.press("r")
    reason = page.get_by_test_id("deny-reason")
    expect(reason).to_be_focused()
    reason.type("use staging")
    expect(reason).to_have_value("use staging")  # "r" itself was not typed into the box
    reason.press("Enter")

    expect(card(page)).to_have_count(0)
    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("denied: “use staging”")
    only = approval(h, only.id)
    assert only.status == "denied"
    assert only.decision.kind == "deny" and only.decision.message == "use staging"
    assert wait_session(h, session.id).status == "completed"
    assert "use staging" in h.model.requests[-1].last_tool_results()[0]


def test_shortcuts_do_nothing_while_focus_is_in_the_composer_or_any_text_input(serve, new_page):
    h = serve([calls(shell("make deploy")), Reply(text="Not deploying.")])
    page = new_page(h)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    expect(card(page)).to_be_visible()
    posts = DecisionRequests(page)

    composer = page.get_by_test_id("composer")
    composer.click()
    for key in ["y", "s", "a", "n", "r", "e"]:
        page.keyboard.press(key)
    expect(composer).to_have_value("ysanre")
    page.keyboard.press("Escape")
    filter_box = page.get_by_test_id("session-filter")
    filter_box.click()
    page.keyboard.type("yan")
    expect(filter_box).to_have_value("yan")
    filter_box.fill("")
    expect(page.get_by_test_id("always-panel")).to_have_count(0)
    expect(page.get_by_test_id("deny-reason")).to_have_count(0)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 1")

    # Requests leave the page in order: if any key above had acted, its POST would come first.
    page.get_by_test_id("deny").click()
    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("denied")
    assert [p["body"]["decision"] for p in posts.sent] == ["deny"]
    assert approval(h, only.id).decision.kind == "deny"


def test_always_allow_shows_the_exact_rule_and_scope_and_escape_cancels_without_a_request(serve, new_page):
    h = serve([calls(shell("npm test --silent")), Reply(text="Tests ran.")])
    page = new_page(h)
    start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    assert pending.suggested_rules == ["mcp__shell__exec(npm test *)"]
    posts = DecisionRequests(page)

    page.keyboard.press("a")
    rule = page.get_by_test_id("always-rule")
    expect(rule).to_have_value("mcp__shell__exec(npm test *)")
    expect(rule).to_be_focused()
    # An admin's default: every session; keeping it to this workspace is the other choice.
    expect(page.get_by_test_id("always-summary")).to_have_text(
        "Always allow commands: mcp__shell__exec(npm test *) in every session (global policy)"
    )
    expect(page.get_by_test_id("always-scope-global")).to_be_checked()
    expect(page.get_by_test_id("always-scope")).to_contain_text("only this session's workspace ")
    page.keyboard.press("Escape")

    expect(page.get_by_test_id("always-panel")).to_have_count(0)
    expect(page.get_by_test_id("approve-once")).to_be_visible()
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 1")
    assert posts.sent == []
    assert approval(h, pending.id).status == "pending"
    assert h.host.policies.permissions.allow == []
    assert not h.host.settings.writable_config_file.exists()


def test_an_approvers_always_allow_shows_the_path_rule_and_workspace_before_saving_it_there(serve, browser):
    # Issue 31, item 2: the card says exactly what is written, and where, before Always is pressed.
    h = serve([calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "hi\n"})), Reply(text="ok")])
    key = Authenticator(data_dir=h.data_dir, token=h.token, users=[]).create_api_key("ann", role="approver")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{h.url}/login?token={key}")
        expect(page.get_by_test_id("pending-counter")).to_be_visible()
        session = start_session(h)
        expect(card(page)).to_be_visible()
        (pending,) = approvals(h, status="pending")
        scope = StandingScope.of_session(h.workspace, None)
        assert pending.always_scope == scope
        posts = DecisionRequests(page)

        page.keyboard.press("a")
        expect(page.get_by_test_id("always-summary")).to_have_text(
            f"Always allow writes: {WRITE}(./notes.txt) in {scope.label}"
        )
        expect(page.get_by_test_id("always-scope")).to_have_text(
            f"Scope: {scope.label} — later sessions there run it unasked; no other session does."
        )
        expect(page.get_by_test_id("always-scope-global")).to_have_count(0)
        screenshot(page, "approval-card-always-approver")
        page.get_by_test_id("always-rule").press("Enter")

        expect(decided(page, pending.id)).to_contain_text("always allowed")
        assert [p["body"] for p in posts.sent] == [
            {"decision": "allow_always", "rules": [f"{WRITE}(./notes.txt)"], "scope": "workspace"}
        ]
        assert wait_session(h, session.id).status == "completed"
        assert h.host.policies.scoped_rule_texts(scope) == [f"{WRITE}(./notes.txt)"]
        assert h.host.policies.permissions.allow == []
        assert not h.host.settings.writable_config_file.exists()
    finally:
        context.close()


def test_always_allow_enter_saves_the_edited_rule_and_runs_the_call(serve, new_page):
    h = serve([calls(shell("npm test --silent")), Reply(text="Tests ran.")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()

    page.keyboard.press("a")
    rule = page.get_by_test_id("always-rule")
    rule.fill("mcp__shell__exec(npm test --silent)")
    rule.press("Enter")

    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("always allowed")
    only = approval(h, only.id)  # read again: the decision has landed now
    assert only.decision.kind == "allow_always"
    assert only.decision.rules == ["mcp__shell__exec(npm test --silent)"]
    assert wait_session(h, session.id).status == "completed"
    assert "mcp__shell__exec(npm test --silent)" in h.host.settings.writable_config_file.read_text()


def test_the_card_shows_a_shell_command_in_full_an_edit_as_a_diff_and_a_url_with_its_host(serve, new_page):
    command = "cd build && \\\n  make -j8 all && \\\n  ./run-tests --filter 'slow and not flaky'"
    h = serve(
        [
            calls(
                shell(command),
                ScriptedToolCall(
                    name=EDIT,
                    arguments={
                        "path": "notes.txt",
                        "old_text": "alpha\nbeta\ngamma\n",
                        "new_text": "alpha\nBETA\ngamma\ndelta\n",
                    },
                ),
                ScriptedToolCall(name=FETCH, arguments={"url": "https://docs.example.org/guide/intro?x=1"}),
            )
        ],
        mcp_servers=FETCH_SERVER,
    )
    page = new_page(h)
    start_session(h)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 3")
    by_tool = {a.tool_name: a for a in approvals(h, status="pending")}

    def focus(tool: str) -> None:
        row = page.locator(f'[data-testid="approval-compact"][data-approval-id="{by_tool[tool].id}"]')
        if row.count():
            row.get_by_role("button").click()
        expect(card(page)).to_have_attribute("data-approval-id", by_tool[tool].id)

    focus(SHELL)
    expect(card(page).locator("pre > code")).to_have_text(command)
    expect(card(page).get_by_test_id("arg-command")).to_have_text(command)

    focus(EDIT)
    expect(card(page).get_by_test_id("diff-del")).to_have_text(["-beta\n"])
    expect(card(page).get_by_test_id("diff-add")).to_have_text(["+BETA\n", "+delta\n"])
    expect(card(page).get_by_test_id("diff-context")).to_have_text([" alpha\n", " gamma\n"])

    focus(FETCH)
    expect(card(page).get_by_test_id("approval-title")).to_have_text("Fetch a web page")
    expect(card(page).get_by_test_id("server-chip")).to_have_text("web")
    expect(card(page).get_by_test_id("url-host")).to_have_text("docs.example.org")
    expect(card(page).locator("mark.url-host")).to_have_count(1)
    screenshot(page, "approval-card-url")
    card(page).get_by_test_id("raw-toggle").click()
    raw = json.loads(card(page).get_by_test_id("arg-raw").inner_text())
    assert raw == {"url": "https://docs.example.org/guide/intro?x=1"}


def test_an_ask_rule_is_named_on_the_card_with_a_destructive_server_says_chip(serve, new_page):
    h = serve(
        [calls(ScriptedToolCall(name=WRITE, arguments={"path": "out.txt", "content": "one\ntwo\n"}))],
        permissions={"ask": [WRITE]},
        policies={WRITE: "always_allow"},
    )
    page = new_page(h)
    start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    assert f"ask rule {WRITE}" in pending.reason

    expect(card(page).get_by_test_id("approval-reason")).to_contain_text(f"ask rule {WRITE} (user)")
    expect(card(page).get_by_test_id("annotation-chip").filter(has_text="destructive")).to_have_text(
        "destructive (server says)"
    )
    expect(card(page).get_by_test_id("diff-add")).to_have_text(["+one\n", "+two\n"])


def test_an_unanswered_request_shows_timed_out_denied_and_leaves_the_queue(serve, new_page):
    h = serve([calls(shell("sleep 1"))], approval_timeout=60)
    page = new_page(h, clock=True)
    start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    expect(page.get_by_test_id("countdown")).to_have_text(re.compile(r"^auto-deny in (1:00|0:5\d)$"))

    page.clock.fast_forward("01:01")

    expect(card(page)).to_have_count(0)
    expect(decided(page, pending.id)).to_contain_text("Run a command — Timed out – denied")
    expect(page.get_by_test_id("pending-counter")).to_have_attribute("data-count", "0")


def test_edit_arguments_validates_the_json_and_allows_the_edited_call(serve, new_page):
    h = serve([calls(shell("echo draft")), Reply(text="Ran the edited command.")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()

    page.keyboard.press("e")
    command = page.locator('[data-testid="edit-field"][data-field="command"]')
    expect(command).to_be_focused()
    expect(command).to_have_value("echo draft")  # the text itself, not a JSON string
    page.get_by_test_id("edit-mode-toggle").click()
    editor = page.get_by_test_id("edit-arguments-json")
    editor.fill('{"command": "echo final",')
    expect(page.get_by_test_id("edit-error")).to_contain_text("Not valid JSON")
    expect(page.get_by_test_id("edit-allow")).to_be_disabled()
    editor.fill('{"command": "echo final"}')
    expect(page.get_by_test_id("edit-error")).to_have_count(0)
    editor.press("Control+Enter")

    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("allowed with edits")
    only = approval(h, only.id)  # read again: the decision has landed now
    assert only.decision.updated_arguments == {"command": "echo final"}
    assert wait_session(h, session.id).status == "completed"
    ran = tool_calls(h, session.id)[SHELL]
    assert ran.arguments == {"command": "echo final"} and "final" in (ran.result or "")


# Issue 12: no key that closes something may decide anything. Each panel of the card is opened,
# then closed with Esc twice over: once from where opening it put the focus, once from the card
# itself. A last Esc with nothing open must do nothing either. Allow once then runs the call: the
# page sends requests in order, so an Esc that had decided would show up as the first request.
CARD_PANELS = {
    "raw-json": ("arg-raw", lambda page: card(page).get_by_test_id("raw-toggle").click()),
    "always-allow-preview": ("always-panel", lambda page: page.keyboard.press("a")),
    "deny-reason-box": ("deny-reason", lambda page: page.keyboard.press("r")),
    "edit-arguments-form": ("edit-arguments", lambda page: page.keyboard.press("e")),
}


@pytest.mark.parametrize("panel", CARD_PANELS)
def test_escape_closes_an_open_panel_wherever_the_focus_is_and_never_decides(serve, new_page, panel):
    h = serve([calls(shell("npm test --silent")), Reply(text="Tests ran.")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")
    posts = DecisionRequests(page)
    shown, open_panel = CARD_PANELS[panel]

    open_panel(page)
    expect(card(page).get_by_test_id(shown)).to_be_visible()
    page.keyboard.press("Escape")
    expect(card(page).get_by_test_id(shown)).to_have_count(0)
    expect(card(page).get_by_test_id("approval-actions")).to_be_visible()

    open_panel(page)
    expect(card(page).get_by_test_id(shown)).to_be_visible()
    card(page).get_by_test_id("approval-title").click()  # the focus leaves the panel for the card
    expect(card(page)).to_be_focused()
    page.keyboard.press("Escape")
    expect(card(page).get_by_test_id(shown)).to_have_count(0)
    expect(card(page).get_by_test_id("approval-actions")).to_be_visible()

    page.keyboard.press("Escape")
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 1")
    assert_still_waiting(h, pending.id)

    card(page).get_by_test_id("approve-once").click()
    expect(decided(page, pending.id)).to_contain_text("allowed once")
    assert [p["body"]["decision"] for p in posts.sent] == ["allow_once"]
    assert approval(h, pending.id).decision.kind == "allow_once"
    assert h.host.policies.permissions.allow == []
    assert wait_session(h, session.id).status == "completed"


def test_escape_with_nothing_open_leaves_the_request_waiting_and_no_hint_says_it_denies(serve, new_page):
    h = serve([calls(shell("make deploy")), Reply(text="Deployed.")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_focused()
    (pending,) = approvals(h, status="pending")
    posts = DecisionRequests(page)

    page.keyboard.press("Escape")
    expect(card(page).get_by_test_id("deny")).to_be_enabled()  # no decision is on its way
    card(page).get_by_test_id("deny").focus()  # nor with the focus on Deny itself
    page.keyboard.press("Escape")

    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 1")
    assert_still_waiting(h, pending.id)
    expect(card(page).get_by_test_id("deny")).to_have_attribute("aria-keyshortcuts", "N")
    expect(page.get_by_test_id("shortcut-help")).to_contain_text(re.compile(r"N\s*deny"))
    expect(page.get_by_test_id("shortcut-help")).not_to_contain_text(re.compile(r"Esc\s*deny"))

    card(page).get_by_test_id("approve-once").click()
    expect(decided(page, pending.id)).to_contain_text("allowed once")
    assert [p["body"]["decision"] for p in posts.sent] == ["allow_once"]
    assert wait_session(h, session.id).status == "completed"
