"""The dashboard around the card: a whole session, notifications, phone width, reconnects,
login and settings, in a real browser against the real server (UX.md section 6, checks 9-10)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from backend.domain.models import Decision
from backend.domain.session_options import SessionOptions
from backend.testing import Reply, ScriptedToolCall

from .dashboard import (
    LIST,
    SHELL,
    WRITE,
    approvals,
    assert_still_waiting,
    audit,
    calls,
    card,
    decided,
    screenshot,
    shell,
    start_session,
    tool_calls,
    wait_session,
)

# Replaces the Notification API with a recorder, and makes the tab look hidden.
HIDDEN_TAB_WITH_NOTIFICATIONS = """
Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
window.__notifications = [];
class RecordingNotification {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) {
    this.title = title;
    this.tag = (options || {}).tag;
    this.closed = false;
    this.onclick = null;
    window.__notifications.push(this);
  }
  close() { this.closed = true; }
}
window.Notification = RecordingNotification;
"""


def test_a_person_allows_one_tool_call_and_denies_another_through_the_dashboard(serve, new_page):
    h = serve(
        [
            calls(
                ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "first line\n"}),
                text="I'll write the notes first.",
            ),
            calls(shell("git push origin main"), text="Now I'll push."),
            Reply(text="The push was denied, so I stopped there."),
        ]
    )
    page = new_page(h)

    page.get_by_test_id("new-session-toggle").click()
    page.get_by_test_id("new-session-prompt").fill("Write notes and push them")
    page.get_by_test_id("new-session-submit").click()
    expect(page.get_by_test_id("session-title")).to_have_text("Write notes and push them")
    expect(card(page).get_by_test_id("approval-title")).to_have_text("Write a file")
    page.get_by_test_id("approve-once").click()

    expect(card(page).get_by_test_id("approval-title")).to_have_text("Run a command")
    expect(card(page).get_by_test_id("arg-command")).to_have_text("git push origin main")
    page.get_by_test_id("deny").click()

    # Stopped at the denied push: amber, not a green "Done" (issue 16).
    expect(page.get_by_test_id("session-view").get_by_test_id("status-badge")).to_have_text("Stopped: denied")
    last_answer = page.get_by_test_id("message-assistant").last
    expect(last_answer).to_contain_text("The push was denied, so I stopped there.")
    expect(page.get_by_test_id("streaming")).to_have_count(0)
    write_approval, push_approval = approvals(h)
    expect(decided(page, write_approval.id)).to_contain_text("Write a file — allowed once")
    expect(decided(page, push_approval.id)).to_contain_text("Run a command — denied")
    expect(page.locator('[data-testid="tool-call"][data-status="done"]')).to_have_count(1)
    expect(page.locator('[data-testid="tool-call"][data-status="denied"]')).to_have_count(1)
    screenshot(page, "session-allowed-and-denied")

    (session,) = h.call(h.host.store.list_sessions())
    assert wait_session(h, session.id).status == "completed"
    outcome = [(a.status, a.decision.kind, a.decided_by) for a in (write_approval, push_approval)]
    assert outcome == [("allowed", "allow_once", "user"), ("denied", "deny", "user")]
    calls_by_name = tool_calls(h, session.id)
    assert calls_by_name[WRITE].status == "done"
    assert calls_by_name[SHELL].status == "denied"
    assert (h.workspace / "notes.txt").read_text() == "first line\n"
    decisions = {(e.tool_name, e.decision, e.decided_by) for e in audit(h)}
    assert decisions == {(WRITE, "allow", "user"), (SHELL, "deny", "user")}


def test_a_hidden_tab_gets_exactly_one_notification_per_approval_and_a_title_count(serve, new_page):
    h = serve(
        [
            calls(ScriptedToolCall(name=LIST, arguments={"path": "."})),
            calls(ScriptedToolCall(name=WRITE, arguments={"path": "a.txt", "content": "a\n"})),
            Reply(text="Done."),
        ]
    )
    page = new_page(h, init_script=HIDDEN_TAB_WITH_NOTIFICATIONS)
    expect(page).to_have_title("Overseer")
    session = start_session(h)

    expect(page).to_have_title(re.compile(r"^\(1\) "))
    expect(page.get_by_test_id("pending-live")).to_have_text("1 approval waiting for you")
    (pending,) = approvals(h, status="pending")
    assert tool_calls(h, session.id)[LIST].status == "done"  # finished before the ask: no notification
    notes = page.evaluate("window.__notifications.map(n => ({tag: n.tag, title: n.title, closed: n.closed}))")
    assert notes == [{"tag": pending.id, "title": "Approval needed: Write a file", "closed": False}]

    h.call(h.host.broker.answer(pending.id, Decision(kind="allow_once")))  # answered elsewhere

    expect(page).to_have_title("Overseer")
    expect(page.get_by_test_id("pending-live")).to_have_text("No approvals waiting")
    page.wait_for_function("window.__notifications[0].closed === true")
    assert wait_session(h, session.id).status == "completed"
    expect(page.get_by_test_id("session-row").get_by_test_id("status-badge")).to_have_text("Done")
    assert page.evaluate("window.__notifications.length") == 1


def test_at_phone_width_the_actions_fit_and_allow_all_once_approves_three_without_a_rule(serve, new_page):
    three = calls(shell("echo one"), shell("echo two"), shell("echo three"))
    h = serve([three, Reply(text="All three ran.")])
    page = new_page(h, viewport={"width": 390, "height": 844})
    session = start_session(h)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 3")
    screenshot(page, "phone-inbox")

    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1] == 390, widths
    buttons = card(page).get_by_test_id("approval-actions").get_by_role("button")
    expect(buttons).to_have_count(6)
    for i in range(6):
        button = buttons.nth(i)
        expect(button).to_be_visible()
        box = button.bounding_box()
        assert box is not None and box["height"] >= 44, (i, box)
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (i, box)
    allow_all = page.get_by_test_id("allow-all-once")
    assert allow_all.bounding_box()["height"] >= 44

    allow_all.click()

    expect(page.get_by_test_id("approval-decided")).to_have_count(3)
    expect(page.get_by_test_id("approval-decided").filter(has_text="allowed once")).to_have_count(3)
    expect(card(page)).to_have_count(0)
    assert wait_session(h, session.id).status == "completed"
    answered = approvals(h)
    assert [(a.status, a.decision.kind) for a in answered] == [("allowed", "allow_once")] * 3
    assert h.host.policies.permissions.allow == []
    assert h.call(h.host.store.get_session(session.id)).session_rules == []
    assert not h.host.settings.writable_config_file.exists()


def test_allow_all_once_leaves_a_high_risk_call_waiting_for_its_own_decision(serve, new_page):
    h = serve([calls(shell("echo low"), shell("rm -f report-final.txt")), Reply(text="Done.")])
    page = new_page(h)
    session = start_session(h)
    expect(page.get_by_test_id("queue-position")).to_have_text("1 of 2")
    by_command = {a.arguments["command"]: a for a in approvals(h, status="pending")}
    low, risky = by_command["echo low"], by_command["rm -f report-final.txt"]

    allow_all = page.get_by_test_id("allow-all-once")
    expect(allow_all).to_have_text("Allow 1 low-risk once")
    expect(page.get_by_test_id("batch-held")).to_have_text("1 needs its own decision")
    screenshot(page, "batch-allow-holds-high-risk")
    allow_all.click()

    expect(decided(page, low.id)).to_contain_text("allowed once")
    expect(card(page).get_by_test_id("arg-command")).to_have_text("rm -f report-final.txt")
    expect(card(page).get_by_test_id("risk-banner")).to_contain_text("High risk")
    assert {a.id: a.status for a in approvals(h)}[low.id] == "allowed"
    assert_still_waiting(h, risky.id)
    page.get_by_test_id("deny").click()
    assert wait_session(h, session.id).status in {"completed", "stopped"}


def test_a_call_denied_by_a_rule_shows_its_command_and_the_rule_live(serve, new_page):
    script = [calls(shell("echo start")), calls(shell("rm -f x")), Reply(text="The rule stopped me.")]
    h = serve(script, permissions={"deny": ["Bash(rm *)"]})
    page = new_page(h)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    expect(card(page).get_by_test_id("arg-command")).to_have_text("echo start")
    page.get_by_test_id("approve-once").click()  # the next step is refused by the rule, live

    refused = page.locator('[data-testid="tool-call"][data-status="denied"]')
    expect(refused).to_contain_text("rm -f x")
    refused.locator("summary").click()
    expect(refused.get_by_test_id("tool-call-decision")).to_have_text("Denied by rule Bash(rm *)")
    expect(refused).not_to_contain_text("No arguments")
    screenshot(page, "rule-denied-call-live")
    assert wait_session(h, session.id).status == "completed"


def test_a_file_only_agents_runs_without_asking_lists_no_shell_tool_or_rule(serve, new_page):
    agents = [{"id": "filer", "servers": ["file"]}]
    h = serve([Reply(text="Hi.")], agents=agents, permissions={"allow": ["Bash(git status)", "Edit(notes.txt)"]})
    page = new_page(h)
    session = start_session(h, options=SessionOptions(agent="filer"))
    page.goto(f"{h.url}/#/s/{session.id}")

    expect(page.get_by_test_id("standing-tools")).to_contain_text("file.read_file")
    expect(page.get_by_test_id("standing-rules")).to_have_text("Edit(notes.txt)")
    expect(page.get_by_test_id("auto-approve-strip")).not_to_contain_text("shell")
    expect(page.get_by_test_id("auto-approve-strip")).not_to_contain_text("git status")


def test_after_a_dropped_connection_the_dashboard_catches_up_without_doubling_anything(serve, new_page):
    h = serve([calls(shell("echo hi")), Reply(text="Said hi.")])
    page = new_page(h)
    session = start_session(h)
    offline = {"on": False}

    def socket_route(ws):
        if offline["on"]:
            ws.close(code=1011, reason="offline")  # the reconnect fails, the page retries later
        else:
            ws.connect_to_server()

    page.route_web_socket(re.compile(r"/ws$"), socket_route)
    page.goto(f"{h.url}/#/s/{session.id}")
    page.reload()
    expect(card(page)).to_be_visible()
    (pending,) = approvals(h, status="pending")

    offline["on"] = True
    page.evaluate("window.__overseerLive.dropForTest()")
    expect(page.get_by_test_id("live-state")).to_have_text("Reconnecting…")
    h.call(h.host.broker.answer(pending.id, Decision(kind="allow_once")))  # missed while offline
    assert wait_session(h, session.id).status == "completed"
    offline["on"] = False

    expect(page.get_by_test_id("live-state")).to_have_count(0)
    expect(page.get_by_test_id("session-view").get_by_test_id("status-badge")).to_have_text("Done")
    expect(decided(page, pending.id)).to_contain_text("allowed once")
    expect(page.get_by_test_id("message-assistant").filter(has_text="Said hi.")).to_have_count(1)
    expect(page.get_by_test_id("message-user")).to_have_count(1)
    expect(page.get_by_test_id("tool-call")).to_have_count(1)
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-status", "done")
    expect(page.get_by_test_id("pending-counter")).to_have_attribute("data-count", "0")


def test_without_a_cookie_the_login_form_signs_in_with_the_token(serve, browser):
    h = serve([])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(h.url)
        expect(page.get_by_test_id("login-form")).to_be_visible()
        # Single-user: the server ignores any username, so the form asks for the token alone.
        expect(page.get_by_label("Access token")).to_be_visible()
        expect(page.get_by_test_id("login-username")).to_have_count(0)
        expect(page.get_by_test_id("login-form")).not_to_contain_text("Username")
        screenshot(page, "login-single-user")
        page.get_by_test_id("login-password").fill("not the token")
        page.get_by_test_id("login-submit").click()
        expect(page.get_by_test_id("login-error")).to_have_text("Wrong access token.")

        page.get_by_test_id("login-password").fill(h.token)
        page.get_by_test_id("login-submit").click()
        expect(page.get_by_test_id("inbox")).to_be_visible()
        cookies = {c["name"]: c for c in context.cookies()}
        assert cookies["overseer_session"]["httpOnly"] is True
        assert page.evaluate("document.cookie") == ""
    finally:
        context.close()


def test_settings_change_a_tool_policy_and_show_the_servers_message_for_a_bad_rule(serve, new_page):
    h = serve([calls(shell("echo audited")), Reply(text="ok")])
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()
    page.keyboard.press("y")
    assert wait_session(h, session.id).status == "completed"

    page.get_by_test_id("nav-settings").click()
    file_server = page.locator('[data-testid="server-card"][data-server="file"]')
    expect(file_server.get_by_test_id("server-state")).to_have_text("ready")
    policy = page.get_by_label(f"Policy for {WRITE}")
    expect(policy).to_have_value("ask")
    policy.select_option("deny")
    expect(policy).to_be_enabled()
    expect(policy).to_have_value("deny")
    assert page.request.get(f"{h.url}/api/policies").json()["policies"][WRITE] == "deny"

    page.get_by_test_id("rule-effect").select_option("deny")
    page.get_by_test_id("rule-input").fill("mcp__shell__exec(")
    page.get_by_test_id("rule-add").click()
    expect(page.get_by_test_id("rules-error")).not_to_be_empty()
    expect(page.get_by_test_id("rule-row")).to_have_count(0)
    assert h.host.policies.permissions.deny == []

    page.get_by_test_id("rule-input").fill("mcp__shell__exec(rm *)")
    page.get_by_test_id("rule-add").click()
    expect(page.get_by_test_id("rule-row")).to_have_count(1)
    expect(page.get_by_test_id("rules-error")).to_have_count(0)
    assert page.request.get(f"{h.url}/api/permissions").json()["deny"] == ["mcp__shell__exec(rm *)"]

    audit_rows = page.get_by_test_id("audit-row")
    expect(audit_rows).to_have_count(1)
    expect(audit_rows.first.get_by_test_id("audit-tool")).to_contain_text("Run a command")  # by its title
    expect(audit_rows.first.get_by_test_id("audit-tool")).to_have_attribute("title", SHELL)
    expect(audit_rows.first).to_contain_text("user")
    screenshot(page, "settings")


def test_people_see_names_tool_titles_reasons_in_words_and_session_titles(serve, new_page):
    h = serve(
        [
            calls(
                ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "first line\n"}),
                shell("echo tidy"),
            ),
            Reply(text="Tidied."),
        ]
    )
    page = new_page(h)
    session = start_session(h, prompt="Tidy the notes folder")

    # The card names the tool by its title, keeps the raw name beside it, and says why it asks
    # in words, with the policy's own text in the tooltip (issue 16, "people see names").
    expect(card(page).get_by_test_id("approval-title")).to_have_text("Write a file", timeout=30_000)
    expect(card(page).locator("code.tool-name")).to_have_text(WRITE)
    reason = card(page).get_by_test_id("approval-reason-text")
    expect(reason).to_have_text("Writing files asks by default (built-in policy)")
    expect(reason).to_have_attribute("title", f"policy {WRITE} = ask (default)")

    # The inbox row of the other request: its title and its session's title.
    row = page.get_by_test_id("approval-compact")
    expect(row.locator(".compact-title")).to_have_text("Run a command")
    expect(row.get_by_test_id("row-session")).to_have_text("Tidy the notes folder")

    # The sidebar lists the waiting session once (pinned), not again under Sessions.
    expect(page.locator(f'[data-testid="session-row"][data-session-id="{session.id}"]')).to_have_count(1)
    expect(page.get_by_test_id("waiting-group")).to_contain_text("Tidy the notes folder")

    write_approval = next(a for a in approvals(h) if a.tool_name == WRITE)
    page.get_by_test_id("approve-once").click()
    just_decided = decided(page, write_approval.id)
    expect(just_decided).to_contain_text("Write a file — allowed once")
    expect(just_decided.get_by_test_id("row-session")).to_have_text("Tidy the notes folder")
    expect(card(page).get_by_test_id("approval-title")).to_have_text("Run a command")
    page.get_by_test_id("approve-once").click()
    assert wait_session(h, session.id).status == "completed"

    # In the session, each tool card is titled, its full name in the tooltip.
    page.locator(f'[data-testid="session-row"][data-session-id="{session.id}"]').click()
    titles = page.get_by_test_id("tool-call-title")
    expect(titles).to_have_text(["Write a file", "Run a command"], timeout=30_000)
    expect(titles.first).to_have_attribute("title", WRITE)
    expect(page.locator(f'[data-testid="session-row"][data-session-id="{session.id}"]')).to_have_count(1)
