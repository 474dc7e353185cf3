"""Every step's card and the Changes tab show what really changed, read from the checkpoints
(issue 33, item 8), in real Chromium at 1440×900, 1024×768 and 390×844, with screenshots.

A shell step that moves a file, deletes one and overwrites one (six lines by three others) shows
"draft.md → plan.md", the deletion, and "+3 −6" under its card and in the Changes tab; a file
write that overwrites six lines says −6 too, and its card shows the text it sent, not a diff
guessed from its arguments ("+3 −0 · whole file"). With checkpoints off, the card and the tab say
that what changed was not recorded instead of guessing.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import ARTIFACTS, SHELL, WRITE, calls, shell, start_session, wait_session

SIZES = {"1440": {"width": 1440, "height": 900}, "1024": {"width": 1024, "height": 768}, "390": {"width": 390, "height": 844}}
ALLOW = {"policies": {WRITE: "always_allow", SHELL: "always_allow"}}
SIX = "".join(f"line {n} of the old text\n" for n in range(1, 7))
MOVE_DELETE_OVERWRITE = "mv draft.md plan.md && rm old.txt && printf 'new 1\\nnew 2\\nnew 3\\n' > report.txt"
SCRIPT = [
    calls(shell(MOVE_DELETE_OVERWRITE, id="move")),
    calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "x\ny\nz\n"}, id="write")),
    Reply(text="Moved the draft, removed the old file, rewrote the report and the notes."),
]


def screenshot(page: Page, name: str) -> None:
    """What the person sees (the viewport), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def prepare(workspace: Path) -> None:
    (workspace / "draft.md").write_text("# Draft\nThe plan, in three parts.\n")
    (workspace / "old.txt").write_text("nobody needs this\n")
    (workspace / "report.txt").write_text(SIX)
    (workspace / "notes.txt").write_text(SIX)


def changed(scope: Locator, path: str) -> Locator:
    return scope.locator(f'[data-testid="step-file"][data-path="{path}"]')


def centre(element: Locator) -> None:
    """Scroll it to the middle of the viewport, clear of the sticky top bar and composer."""
    element.evaluate("e => e.scrollIntoView({block: 'center'})")


def assert_within_width(page: Page, element: Locator) -> None:
    """Nothing of it is cut off at the right edge (the phone's 390 px included)."""
    box = element.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 0.5, box


def assert_real_diff(scope: Locator) -> None:
    """The shell step's three files as its checkpoints tell them."""
    expect(scope.get_by_test_id("step-file")).to_have_count(3)
    moved = changed(scope, "plan.md")
    expect(moved).to_have_attribute("data-status", "renamed")
    expect(moved).to_have_attribute("data-old-path", "draft.md")
    expect(moved.get_by_test_id("step-file-move")).to_have_text("draft.md → plan.md")
    expect(moved.get_by_test_id("step-file-similarity")).to_have_text("(unchanged)")
    gone = changed(scope, "old.txt")
    expect(gone.get_by_test_id("step-file-status")).to_have_text("deleted")
    expect(gone.get_by_test_id("step-file-lines")).to_have_text("+0 −1")
    overwritten = changed(scope, "report.txt")
    expect(overwritten.get_by_test_id("step-file-status")).to_have_text("modified")
    expect(overwritten.get_by_test_id("step-file-lines")).to_have_text("+3 −6")


def test_the_card_and_the_changes_tab_show_a_move_a_deletion_and_an_overwrites_minus_6(serve, new_page):
    h = serve(SCRIPT, **ALLOW)
    prepare(h.workspace)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "plan.md").exists() and not (h.workspace / "draft.md").exists()
    page = new_page(h, viewport=SIZES["1440"], path=f"#/s/{session.id}")

    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.get_by_test_id("tab-conversation").click()

        # Under the shell step's card: the move, the deletion, the overwrite's +3 −6.
        by_shell = page.locator('[data-testid="step-changes"][data-step="1"]')
        assert_real_diff(by_shell)
        moved = changed(by_shell, "plan.md")
        centre(moved)
        expect(moved.get_by_test_id("step-file-move")).to_be_in_viewport()
        assert_within_width(page, moved.get_by_test_id("step-file-move"))
        report = changed(by_shell, "report.txt")
        if report.get_attribute("open") is None:
            report.locator(":scope > summary").click()
        expect(report.get_by_test_id("diff-del")).to_have_count(6)
        expect(report.get_by_test_id("diff-add")).to_have_text(["+new 1\n", "+new 2\n", "+new 3\n"])
        centre(by_shell)
        screenshot(page, f"issue33-item8-{size}-shell-step-card")

        # The write's card: its own step says −6; the card shows the text it sent, no guessed diff.
        by_write = page.locator('[data-testid="step-changes"][data-step="2"]')
        expect(changed(by_write, "notes.txt").get_by_test_id("step-file-lines")).to_have_text("+3 −6")
        card = page.locator('[data-testid="tool-call"][data-tool-call-id="write"]')
        if card.get_attribute("open") is None:
            card.locator(":scope > summary").click()
        expect(card.get_by_test_id("sent-arguments")).to_be_visible()
        expect(card.get_by_test_id("arg-diff")).to_have_count(0)
        expect(card.get_by_test_id("sent-note")).to_contain_text("read from the workspace's checkpoints")
        centre(card)
        screenshot(page, f"issue33-item8-{size}-write-card")

        # The Changes tab: the same truth per step, and the session's net change.
        page.get_by_test_id("tab-changes").click()
        step = page.locator('[data-testid="changes-step"][data-step="1"]')
        assert_real_diff(step)
        expect(step.get_by_test_id("changes-step-summary")).to_have_text("3 files changed · +3 −7")
        net = page.get_by_test_id("changes-net")
        expect(net.get_by_test_id("changes-net-summary")).to_have_text("4 files changed · +6 −13")
        expect(changed(net, "plan.md").get_by_test_id("step-file-move")).to_have_text("draft.md → plan.md")
        move = changed(step, "plan.md").get_by_test_id("step-file-move")
        centre(move)
        expect(move).to_be_in_viewport()
        assert_within_width(page, move)
        screenshot(page, f"issue33-item8-{size}-changes-tab")


def test_with_checkpoints_off_the_card_and_the_changes_tab_say_the_change_was_not_recorded(serve, new_page):
    h = serve(SCRIPT, checkpoints={"enabled": False}, **ALLOW)
    prepare(h.workspace)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    page = new_page(h, viewport=SIZES["390"], path=f"#/s/{session.id}")

    notes = page.get_by_test_id("step-no-checkpoint-text")
    expect(notes).to_have_text([f"No checkpoint: {'checkpoints are off on this host, so what this step changed was not recorded'}"] * 2)
    expect(page.get_by_test_id("step-changes")).to_have_count(0)
    card = page.locator('[data-testid="tool-call"][data-tool-call-id="write"]')
    card.locator(":scope > summary").click()
    expect(card.get_by_test_id("arg-diff")).to_have_count(0)  # no "+3 −0 · whole file" guess
    expect(card.get_by_test_id("sent-note")).to_have_text("What it changed on disk was not recorded: it has no checkpoint.")
    screenshot(page, "issue33-item8-390-checkpoints-off-card")

    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("changes-off")).to_contain_text("Checkpoints are off on this host")
    expect(page.get_by_test_id("step-file")).to_have_count(0)
    screenshot(page, "issue33-item8-390-checkpoints-off-changes-tab")
