"""A sub-agent's approval in a real browser (UX.md check 8), through the real invoke_agent server."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import ModelRequest, Reply, ScriptedToolCall

from .dashboard import WRITE, approvals, card, start_session, wait_session

INVOKE = "mcp__invoke_agent__invoke_agent"


def test_a_sub_agent_request_shows_in_the_parent_and_the_inbox_with_a_breadcrumb_and_one_decision_clears_both(
    serve, new_page
):
    def parent_finishes(request: ModelRequest) -> Reply:
        return Reply(text="child said: " + request.last_tool_results()[0])

    h = serve(
        [
            Reply(tool_calls=[ScriptedToolCall(name=INVOKE, arguments={"prompt": "Write the notes file"})]),
            Reply(tool_calls=[ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "hi"})]),
            Reply(text="notes written"),
            parent_finishes,
        ],
        servers=("file", "shell", "invoke_agent"),
    )
    inbox = new_page(h)
    parent = start_session(h, "Delegate the notes")
    parent_view = new_page(h, path=f"#/s/{parent.id}")

    for page in (inbox, parent_view):
        expect(card(page)).to_be_visible()
        expect(card(page).get_by_test_id("breadcrumb")).to_have_text("Delegate the notes › Write the notes file")
    (pending,) = approvals(h, status="pending")
    child = h.call(h.host.store.get_session(pending.session_id))
    assert (child.parent_id, child.origin) == (parent.id, "agent")

    parent_view.get_by_test_id("approve-once").click()

    expect(parent_view.get_by_test_id("approval-card")).to_have_count(0)
    expect(inbox.get_by_test_id("approval-card")).to_have_count(0)
    assert wait_session(h, parent.id).status == "completed"
    assert (h.workspace / "notes.txt").read_text() == "hi"
    assert h.call(h.host.store.list_messages(parent.id))[-1].content == "child said: notes written"
