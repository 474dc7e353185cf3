"""Review before allow, in real Chromium (issue 16): a write over an existing file is shown as its
diff against the file on disk, an edit in the context of the file, arguments are edited as text
with their errors beside them, the audit log says a person edited them, and the panels that
answer open in view at desktop and phone width."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import EDIT, WRITE, approval, approvals, audit, calls, card, decided, start_session, wait_session

LINES = "".join(f"line {n}\n" for n in range(1, 31))


def write(path: str, content: str) -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": content})


def test_a_write_over_an_existing_file_shows_its_diff_against_the_file_on_disk(serve, new_page):
    changed = LINES.replace("line 15\n", "line fifteen\n")
    h = serve([calls(write("notes.txt", changed)), Reply(text="done")])
    (h.workspace / "notes.txt").write_text(LINES)
    page = new_page(h)
    start_session(h)

    shown = card(page)
    expect(shown.get_by_test_id("diff-note")).to_contain_text("overwrites the existing file")
    expect(shown.get_by_test_id("diff-del")).to_have_text(["-line 15\n"])
    expect(shown.get_by_test_id("diff-add")).to_have_text(["+line fifteen\n"])
    expect(shown.get_by_test_id("diff-context")).to_have_count(6)  # three lines either side
    expect(shown.get_by_test_id("diff-hunk")).to_have_text(["@@ -12,7 +12,7 @@\n"])
    expect(shown.get_by_test_id("diff-gap")).to_have_text(["⋯ 11 unchanged lines\n", "⋯ 12 unchanged lines\n"])


def test_a_write_of_a_new_file_says_it_creates_it(serve, new_page):
    h = serve([calls(write("fresh.txt", "one\ntwo\n")), Reply(text="done")])
    page = new_page(h)
    start_session(h)
    expect(card(page).get_by_test_id("diff-note")).to_contain_text("new file")
    expect(card(page).get_by_test_id("diff-add")).to_have_text(["+one\n", "+two\n"])


def test_an_edit_is_shown_in_the_context_of_the_file_and_a_stale_one_is_flagged(serve, new_page):
    edit = {"path": "notes.txt", "old_text": "line 20\n", "new_text": "line twenty\n"}
    stale = {"path": "notes.txt", "old_text": "line 99\n", "new_text": "x\n"}
    h = serve(
        [calls(ScriptedToolCall(name=EDIT, arguments=edit)), calls(ScriptedToolCall(name=EDIT, arguments=stale)), Reply(text="ok")]
    )
    (h.workspace / "notes.txt").write_text(LINES)
    page = new_page(h)
    start_session(h)

    shown = card(page)
    expect(shown.get_by_test_id("diff-note")).to_contain_text("in context")
    expect(shown.get_by_test_id("diff-hunk")).to_have_text(["@@ -17,7 +17,7 @@\n"])
    expect(shown.get_by_test_id("diff-context").first).to_have_text(" line 17\n")
    expect(shown.get_by_test_id("diff-del")).to_have_text(["-line 20\n"])
    expect(shown.get_by_test_id("diff-add")).to_have_text(["+line twenty\n"])
    shown.get_by_test_id("approve-once").click()

    expect(card(page).get_by_test_id("diff-warning")).to_contain_text("not in the file as it is now: this edit will fail")


def test_file_content_is_edited_as_text_previewed_and_the_audit_log_marks_the_edit(serve, new_page):
    h = serve([calls(write("notes.txt", "first\nsecond\n")), Reply(text="written")])
    (h.workspace / "notes.txt").write_text("first\n")
    page = new_page(h)
    session = start_session(h)
    expect(card(page)).to_be_visible()

    page.keyboard.press("e")
    content = page.locator('[data-testid="edit-field"][data-field="content"]')
    expect(content).to_have_value("first\nsecond\n")  # real line breaks, not "\\n" in a JSON string
    content.fill("first\nsecond, edited\n")
    preview = page.get_by_test_id("edit-preview")
    preview.get_by_text("Preview the change").click()
    expect(preview.get_by_test_id("diff-add")).to_have_text(["+second, edited\n"])
    expect(preview.get_by_test_id("diff-note")).to_contain_text("overwrites the existing file")
    page.get_by_test_id("edit-allow").click()

    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("allowed with edits")
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "notes.txt").read_text() == "first\nsecond, edited\n"
    (entry,) = [e for e in audit(h) if e.tool_name == WRITE]
    assert entry.detail == "allow_once, allowed with edits"
    assert entry.arguments["content"] == "first\nsecond, edited\n"

    page.get_by_test_id("nav-settings").click()
    row = page.get_by_test_id("audit-row").filter(has=page.locator(f"[data-testid=audit-tool][title=\"{WRITE}\"]"))
    expect(row.get_by_test_id("audit-edited")).to_have_text("edited by a person")


def test_a_json_argument_with_an_error_shows_it_beside_its_field(serve, new_page):
    call = ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "ls", "timeout": 30})
    h = serve([calls(call), Reply(text="ok")])
    page = new_page(h)
    start_session(h)
    expect(card(page)).to_be_visible()
    page.keyboard.press("e")
    timeout = page.locator('[data-testid="edit-field"][data-field="timeout"]')
    timeout.fill("thirty")
    field = page.locator(".edit-field").filter(has=timeout)
    expect(field.get_by_test_id("edit-error")).to_contain_text("Not valid JSON")
    expect(timeout).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("edit-allow")).to_be_disabled()
    timeout.fill("5")
    expect(page.get_by_test_id("edit-error")).to_have_count(0)
    page.get_by_test_id("edit-allow").click()
    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("allowed with edits")
    assert approval(h, only.id).decision.updated_arguments == {"command": "ls", "timeout": 5}


def _clear_of_the_composer(page: Page, test_id: str) -> None:
    button = card(page).get_by_test_id(test_id)
    expect(button).to_be_in_viewport()
    box = button.bounding_box()
    composer = page.locator(".composer").bounding_box()
    assert box is not None and composer is not None
    assert box["y"] + box["height"] <= composer["y"], (box, composer)


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}, {"width": 390, "height": 844}], ids=["desktop", "phone"])
def test_the_reason_and_edit_panels_open_in_view_above_the_composer(serve, new_page, viewport):
    long = "".join(f"row {n}\n" for n in range(60))
    h = serve([calls(write("big.txt", long)), Reply(text="ok")])
    page = new_page(h, viewport=viewport)
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    expect(card(page)).to_be_visible()
    # A tall card (its whole diff shows, issue 33 item 9): its panels open far down.

    card(page).get_by_test_id("deny-with-reason").click()
    expect(card(page).get_by_test_id("deny-reason")).to_be_focused()
    _clear_of_the_composer(page, "deny-reason-send")
    page.keyboard.press("Escape")

    card(page).get_by_test_id("edit-args").click()
    _clear_of_the_composer(page, "edit-allow")
