"""The session view's "Auto-approve: on/off" switch, in real Chromium against the real server.

Turned on while a request waits, it asks whether to approve that one too; on, the session's asks
are allowed in the person's name (audit rows `via auto`) while a deny rule still denies.
"""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply

from .dashboard import approval, audit, calls, card, decided, screenshot, shell, start_session, tool_calls, wait_session


def first_request(h, timeout: float = 60):
    """The first pending approval, once the session has asked (bounded; tool servers may start slowly)."""

    async def wait():
        events = h.host.bus.subscribe(None)  # before looking, so an approval asked meanwhile wakes us
        try:
            while not (pending := await h.host.store.list_approvals(status="pending")):
                await events.get(timeout=timeout)
            return pending[0]
        finally:
            h.host.bus.unsubscribe(events)

    return h.call(wait(), timeout=timeout + 5)


def test_turned_on_while_a_request_waits_it_asks_approves_it_and_what_follows_but_never_a_deny(serve, new_page):
    h = serve(
        [calls(shell("echo one", id="c1")), calls(shell("rm -rf build", id="c2")), calls(shell("echo two", id="c3")), Reply(text="done")],
        permissions={"deny": ["Bash(rm *)"]},
    )
    session = start_session(h)
    first_request(h)
    page = new_page(h, path=f"#/s/{session.id}")
    expect(card(page)).to_be_visible()
    switch = page.get_by_test_id("auto-approve-switch")
    expect(switch).to_have_text("Auto-approve: off")

    switch.click()
    expect(page.get_by_test_id("auto-approve-ask")).to_contain_text("1 request is waiting in this session")
    page.get_by_test_id("auto-approve-scope-edits_and_commands").check()
    page.get_by_test_id("auto-approve-with-pending").click()

    expect(switch).to_have_attribute("aria-checked", "true")
    expect(page.get_by_test_id("auto-approve-by")).to_contain_text("by admin")
    assert wait_session(h, session.id, timeout=60).status == "completed"
    statuses = {c.id: c.status for c in h.call(h.host.store.list_tool_calls(session.id))}
    assert statuses == {"c1": "done", "c2": "denied", "c3": "done"}
    rows = {a.tool_call_id: a for a in audit(h) if a.session_id == session.id}
    assert [(rows[c].decision, rows[c].decider.name, rows[c].decider.via) for c in ("c1", "c3")] == [
        ("allow", "admin", "auto"),
        ("allow", "admin", "auto"),
    ]
    assert (rows["c2"].decision, rows["c2"].decided_by) == ("deny", "rule")
    expect(card(page)).to_have_count(0)


def test_new_requests_only_leaves_the_waiting_one_to_the_person_and_off_turns_it_off(serve, new_page):
    h = serve([calls(shell("echo first")), Reply(text="ok")])
    session = start_session(h)
    waiting = first_request(h)
    page = new_page(h, path=f"#/s/{session.id}")
    expect(card(page)).to_be_visible()

    page.get_by_test_id("auto-approve-switch").click()
    page.get_by_test_id("auto-approve-new-only").click()
    expect(page.get_by_test_id("auto-approve-switch")).to_have_text("Auto-approve: on")
    expect(card(page)).to_be_visible()  # still the person's to answer
    assert approval(h, waiting.id).status == "pending"
    stored = h.call(h.host.store.get_session(session.id))
    assert stored.auto_approve is not None and stored.auto_approve.by.name == "admin"

    page.get_by_test_id("auto-approve-switch").click()
    expect(page.get_by_test_id("auto-approve-switch")).to_have_text("Auto-approve: off")
    assert h.call(h.host.store.get_session(session.id)).auto_approve is None
    assert approval(h, waiting.id).status == "pending"

    # Cancel in the question changes nothing.
    page.get_by_test_id("auto-approve-switch").click()
    page.get_by_test_id("auto-approve-cancel").click()
    expect(page.get_by_test_id("auto-approve-switch")).to_have_text("Auto-approve: off")
    assert h.call(h.host.store.get_session(session.id)).auto_approve is None
    assert tool_calls(h, session.id)["mcp__shell__exec"].status == "waiting_approval"
    h.call(h.host.runner.stop(session.id))


def test_an_auto_approved_command_reads_auto_approved_by_admin_and_a_high_risk_rm_still_asks(serve, new_page):
    h = serve([calls(shell("echo one", id="c1")), calls(shell("rm -f report-final.txt", id="c2")), Reply(text="done")])
    session = start_session(h)
    echo = first_request(h)
    page = new_page(h, path=f"#/s/{session.id}")
    expect(card(page)).to_be_visible()
    page.get_by_test_id("auto-approve-switch").click()
    expect(page.get_by_test_id("auto-approve-scope-workspace_edits")).to_be_checked()  # the narrow scope first
    expect(page.get_by_test_id("auto-approve-high-risk")).not_to_be_checked()
    page.get_by_test_id("auto-approve-scope-edits_and_commands").check()
    page.get_by_test_id("auto-approve-with-pending").click()
    expect(page.get_by_test_id("auto-approve-by")).to_contain_text("edits and commands, High risk still asks")

    expect(decided(page, echo.id)).to_contain_text("auto-approved by admin")
    expect(decided(page, echo.id)).not_to_contain_text("allowed once")
    echo_card = page.locator('[data-testid="tool-call"][data-tool-call-id="c1"]')
    expect(echo_card.get_by_test_id("tool-call-decision")).to_contain_text("auto-approved by admin")
    # The High-risk rm -f waits on its own card for the person.
    expect(card(page)).to_contain_text("rm -f report-final.txt")
    expect(card(page)).to_contain_text("High risk")
    screenshot(page, "auto-approve-high-risk-asks")
    asked = [a for a in h.call(h.host.store.list_approvals(session_id=session.id)) if a.tool_call_id == "c2"]
    assert [a.status for a in asked] == ["pending"]
    h.call(h.host.runner.stop(session.id))
