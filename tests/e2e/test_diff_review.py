"""A write's or edit's diff reviewed as in a code editor, in real Chromium (issue 33, item 9).

At 1440×900, 1024×768 and 390×844: a long write to a .py file shows every changed line (a long diff
scrolls inside its own region, none cut or hidden behind "Show all"), its tokens coloured by the
highlighter, with the hunk count and +/- totals above it. A person ticks 1 of 3 hunks and allows:
the tool writes exactly the file with that hunk alone, and the audit and the transcript say the
call was allowed with edits. An edit_file accepted in part stays an edit_file.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import ARTIFACTS, EDIT, WRITE, approvals, audit, calls, card, decided, start_session, wait_session

VIEWPORTS = {
    "wide": {"width": 1440, "height": 900},
    "laptop": {"width": 1024, "height": 768},
    "phone": {"width": 390, "height": 844},
}
BEFORE = "".join(f"def step_{n}():\n    return {n}\n" for n in range(1, 41))
"""80 lines of Python on disk."""
LONG = BEFORE.replace("def step_", "def stage_", 30).replace("    return ", "    return 10 * ", 30)
"""Lines 1-60 changed: 60 removed, 60 added, one hunk."""
LINES = "".join(f"line {n}\n" for n in range(1, 31))
THREE = LINES.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\n").replace("line 27\n", "")
"""Three changes more than six kept lines apart: three hunks."""
ONLY_SECOND = LINES.replace("line 15\n", "line fifteen\n")


def shot(page: Page, name: str) -> None:
    """What the person sees (the viewport), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"issue33-item9-{name}.png"))


def write(path: str, content: str) -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": content})


def no_horizontal_scroll(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize("size", VIEWPORTS, ids=list(VIEWPORTS))
def test_a_long_write_shows_every_line_coloured_with_its_totals(serve, new_page, size):
    h = serve([calls(write("steps.py", LONG)), Reply(text="done")])
    (h.workspace / "steps.py").write_text(BEFORE)
    page = new_page(h, viewport=VIEWPORTS[size])
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")

    shown = card(page)
    expect(shown.get_by_test_id("diff-stat")).to_contain_text("+60 −60")
    expect(shown.get_by_test_id("diff-hunks")).to_have_text(" · 1 hunk")
    expect(shown.get_by_test_id("diff-add")).to_have_count(60)
    expect(shown.get_by_test_id("diff-del")).to_have_count(60)
    expect(shown.get_by_text("Show all")).to_have_count(0)  # nothing folded away
    expect(shown.get_by_test_id("diff-add").first).to_have_text("+def stage_1():\n")
    expect(shown.get_by_test_id("diff-add").last).to_have_text("+    return 10 * 30\n")

    # Coloured by the highlighter: `def` a keyword and the numbers numbers, on the changed lines too.
    expect(shown.locator("pre.diff")).to_have_attribute("data-colouring", "highlighted")
    expect(shown.locator(".diff-add .hljs-keyword").first).to_have_text("def")
    expect(shown.locator(".diff-add .hljs-number").first).to_have_text("10")
    expect(shown.locator(".diff-del .hljs-keyword")).to_have_count(60)  # `def` and `return` of 30 functions
    shot(page, f"long-write-{size}")

    # The long diff scrolls in its own region, which holds every line: its end can be reached.
    region = shown.get_by_test_id("diff-scroll")
    assert region.evaluate("el => el.scrollHeight > el.clientHeight")
    last = shown.get_by_test_id("diff-add").last
    last.scroll_into_view_if_needed()
    expect(last).to_be_in_viewport()
    assert no_horizontal_scroll(page)
    shot(page, f"long-write-{size}-end")


@pytest.mark.parametrize("size", VIEWPORTS, ids=list(VIEWPORTS))
def test_one_hunk_of_three_allowed_writes_exactly_that_hunk(serve, new_page, size):
    h = serve([calls(write("notes.txt", THREE)), Reply(text="written")])
    (h.workspace / "notes.txt").write_text(LINES)
    page = new_page(h, viewport=VIEWPORTS[size])
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")

    shown = card(page)
    boxes = shown.get_by_test_id("hunk-check")
    expect(boxes).to_have_count(3)
    expect(shown.get_by_test_id("diff-hunks")).to_have_text(" · 3 hunks")
    for box in boxes.all():
        expect(box).to_be_checked()
    boxes.nth(0).click()
    boxes.nth(2).focus()
    page.keyboard.press("Space")  # the keyboard ticks and unticks as well as a click
    expect(boxes.nth(2)).not_to_be_checked()
    expect(shown.get_by_test_id("approve-once")).to_have_count(0)  # no allowing the whole call by mistake
    expect(shown.get_by_test_id("approve-session")).to_be_disabled()
    allow = shown.get_by_test_id("allow-hunks")
    expect(allow).to_contain_text("Allow selected hunks (1 of 3 hunks)")
    allow.scroll_into_view_if_needed()
    shot(page, f"one-of-three-{size}")
    allow.click()

    (only,) = approvals(h)
    expect(decided(page, only.id)).to_contain_text("allowed with edits")
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "notes.txt").read_bytes() == ONLY_SECOND.encode()
    (entry,) = [e for e in audit(h) if e.tool_name == WRITE]
    assert entry.detail == "allow_once, allowed with edits"
    assert entry.arguments == {"path": "notes.txt", "content": ONLY_SECOND}
    shot(page, f"one-of-three-{size}-allowed")


def test_an_edit_accepted_in_part_by_keyboard_stays_an_edit_of_the_chosen_hunk(serve, new_page):
    old = "".join(f"line {n}\n" for n in range(3, 28))
    new = old.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\n").replace("line 27\n", "")
    h = serve([calls(ScriptedToolCall(name=EDIT, arguments={"path": "notes.txt", "old_text": old, "new_text": new})), Reply(text="ok")])
    (h.workspace / "notes.txt").write_text(LINES)
    page = new_page(h, viewport=VIEWPORTS["wide"])
    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")

    shown = card(page)
    boxes = shown.get_by_test_id("hunk-check")
    expect(boxes).to_have_count(3)
    boxes.nth(0).focus()
    page.keyboard.press("Enter")  # Enter on a hunk's box unticks it; it allows nothing
    expect(boxes.nth(0)).not_to_be_checked()
    boxes.nth(1).focus()
    page.keyboard.press("Space")
    expect(shown.get_by_test_id("allow-hunks")).to_contain_text("(1 of 3 hunks)")
    (waiting,) = approvals(h)
    assert waiting.status == "pending"
    shown.get_by_test_id("allow-hunks").click()

    expect(decided(page, waiting.id)).to_contain_text("allowed with edits")
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "notes.txt").read_bytes() == LINES.replace("line 27\n", "").encode()
    (entry,) = [e for e in audit(h) if e.tool_name == EDIT]  # the same tool, never a write instead
    assert entry.detail == "allow_once, allowed with edits"
    assert entry.arguments == {"path": "notes.txt", "old_text": "line 27\n", "new_text": ""}
