"""A session's Changes tab in real Chromium (issue 16), for a host that keeps no checkpoints: like a
pull request's Files tab, every file the session wrote or edited, each change as a diff, and
nothing for a change that failed."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import EDIT, WRITE, calls, start_session, wait_session

ALLOW_FILES = {"policies": {WRITE: "always_allow", EDIT: "always_allow"}, "checkpoints": {"enabled": False}}
"""Checkpoints off: the tab reads the changes from the calls' arguments (with checkpoints on it shows
what each step changed in the workspace: tests/e2e/test_checkpoints.py)."""


def test_the_changes_tab_lists_each_file_the_session_changed_with_its_diffs(serve, new_page):
    script = [
        calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "a\nb\nc\n"})),
        calls(ScriptedToolCall(name=EDIT, arguments={"path": "./notes.txt", "old_text": "b\n", "new_text": "B\n"})),
        calls(ScriptedToolCall(name=EDIT, arguments={"path": "notes.txt", "old_text": "missing\n", "new_text": "x\n"})),
        calls(ScriptedToolCall(name=WRITE, arguments={"path": "other.txt", "content": "one\n"})),
        Reply(text="Changed two files."),
    ]
    h = serve(script, **ALLOW_FILES)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    page = new_page(h)
    page.goto(f"{h.url}/#/s/{session.id}")

    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("transcript")).to_be_hidden()
    expect(page.get_by_test_id("changes-summary")).to_have_text("2 files changed · +5 −1")
    notes = page.locator('[data-testid="changes-file"][data-path="notes.txt"]')
    changes = notes.get_by_test_id("changes-change")
    expect(changes).to_have_count(2)  # the failed edit changed nothing
    expect(changes.nth(0).get_by_test_id("diff-add")).to_have_text(["+a\n", "+b\n", "+c\n"])
    expect(changes.nth(0).get_by_test_id("diff-note")).to_contain_text("written in full")
    edit = changes.nth(1)
    expect(edit.get_by_test_id("diff-del")).to_have_text(["-b\n"])
    expect(edit.get_by_test_id("diff-add")).to_have_text(["+B\n"])
    expect(edit.get_by_test_id("diff-context")).to_have_text([" a\n", " c\n"])  # in the file's context
    other = page.locator('[data-testid="changes-file"][data-path="other.txt"]')
    expect(other.get_by_test_id("diff-add")).to_have_text(["+one\n"])

    page.get_by_test_id("tab-conversation").click()
    expect(page.get_by_test_id("transcript")).to_contain_text("Changed two files.")


def test_a_session_that_changed_no_file_says_so(serve, new_page):
    h = serve([Reply(text="Nothing to change.")])
    session = start_session(h)
    wait_session(h, session.id)
    page = new_page(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("changes-empty")).to_have_text("This session has not written or edited any file.")
