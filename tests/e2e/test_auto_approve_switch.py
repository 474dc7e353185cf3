"""The session view's "Auto-approve: on/off" switch, in real Chromium against the real server.

Turned on while a request waits, it asks whether to approve that one too; on, the session's asks
are allowed in the person's name (audit rows `via auto`) while a deny rule still denies.
"""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply

from .dashboard import approval, audit, calls, card, shell, start_session, tool_calls, wait_session


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
