"""Checkpoints and rewind in real Chromium (issue 32): each step shows the files it changed (shell
steps included, read from the workspace, not from the arguments), the Changes tab shows every
step's diff and the session's net change, and a rewind from the dashboard restores the files on
disk, is audited with who asked, and is itself a step that can be undone."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import (
    EDIT,
    SHELL,
    WRITE,
    approvals,
    assert_still_waiting,
    calls,
    screenshot,
    shell,
    start_session,
    wait_session,
)

ALLOW = {"policies": {WRITE: "always_allow", EDIT: "always_allow", SHELL: "always_allow"}}

FIVE_STEPS = [
    calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "a\nb\nc\n"})),
    calls(ScriptedToolCall(name=EDIT, arguments={"path": "notes.txt", "old_text": "b\n", "new_text": "B\n"})),
    calls(shell("printf 'made by shell\\n' > made.txt")),
    calls(ScriptedToolCall(name=WRITE, arguments={"path": "other.txt", "content": "one\n"})),
    calls(shell("rm notes.txt")),
    Reply(text="Five steps done."),
]


def step(page: Page, number: int) -> Locator:
    return page.locator(f'[data-testid="changes-step"][data-step="{number}"]')


def changed(scope: Locator, path: str) -> Locator:
    return scope.locator(f'[data-testid="step-file"][data-path="{path}"]')


def test_each_step_shows_its_diff_and_a_rewind_restores_the_files_is_audited_and_can_be_undone(serve, new_page):
    h = serve(FIVE_STEPS, **ALLOW)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    work = h.workspace
    assert not (work / "notes.txt").exists() and (work / "made.txt").read_text() == "made by shell\n"
    page = new_page(h, path=f"#/s/{session.id}")

    # In the conversation, under its card, a shell step shows the file it made.
    by_shell = page.locator('[data-testid="step-changes"][data-step="3"]')
    expect(by_shell.get_by_test_id("step-file")).to_have_count(1)
    made = changed(by_shell, "made.txt")
    expect(made).to_have_attribute("data-status", "added")
    expect(made.get_by_test_id("step-file-lines")).to_have_text("+1 −0")
    made.locator("summary").click()
    expect(made.get_by_test_id("diff-add")).to_have_text(["+made by shell\n"])

    # The Changes tab: every step's diff, and the net change of the session.
    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("transcript")).to_be_hidden()
    expect(page.get_by_test_id("changes-step")).to_have_count(5)
    expect(changed(step(page, 1), "notes.txt").get_by_test_id("diff-add")).to_have_text(["+a\n", "+b\n", "+c\n"])
    edit = changed(step(page, 2), "notes.txt")
    expect(edit).to_have_attribute("data-status", "modified")
    expect(edit.get_by_test_id("diff-del")).to_have_text(["-b\n"])
    expect(edit.get_by_test_id("diff-add")).to_have_text(["+B\n"])
    expect(edit.get_by_test_id("diff-context")).to_have_text([" a\n", " c\n"])
    expect(changed(step(page, 3), "made.txt").get_by_test_id("diff-add")).to_have_text(["+made by shell\n"])
    expect(changed(step(page, 4), "other.txt").get_by_test_id("diff-add")).to_have_text(["+one\n"])
    deleted = changed(step(page, 5), "notes.txt")
    expect(deleted).to_have_attribute("data-status", "deleted")
    expect(deleted.get_by_test_id("diff-del")).to_have_text(["-a\n", "-B\n", "-c\n"])
    net = page.get_by_test_id("changes-net")
    expect(net.get_by_test_id("changes-net-summary")).to_have_text("2 files changed · +2 −0")
    expect(net.get_by_test_id("step-file")).to_have_count(2)
    screenshot(page, "checkpoints-changes-tab")

    # Rewind to before step 3: the dialog lists what will change, and the files come back on disk.
    step(page, 3).get_by_test_id("rewind-button").click()
    dialog = page.get_by_role("dialog", name="Rewind to before step 3")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_test_id("rewind-file")).to_have_count(3)
    for path in ("made.txt", "notes.txt", "other.txt"):
        expect(dialog.locator(f'[data-testid="rewind-file"][data-path="{path}"]')).to_be_visible()
    screenshot(page, "checkpoints-rewind-dialog")
    dialog.get_by_test_id("rewind-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("rewind-done")).to_have_text("Restored 3 files.")
    assert (work / "notes.txt").read_text() == "a\nB\nc\n"
    assert not (work / "made.txt").exists() and not (work / "other.txt").exists()

    # The rewind is a step of its own, naming who did it, with "Undo rewind".
    rewind = step(page, 6)
    expect(rewind).to_have_attribute("data-kind", "rewind")
    expect(rewind).to_contain_text("Rewound to before step 3 by admin (via rest)")
    page.get_by_test_id("tab-conversation").click()
    entry = page.get_by_test_id("rewind-entry")
    expect(entry.get_by_test_id("rewind-entry-text")).to_contain_text("Rewound to before step 3 by admin (via rest)")

    # Undo it from the keyboard: the workspace is as the five steps left it.
    entry.get_by_test_id("undo-rewind").focus()
    page.keyboard.press("Enter")
    undo = page.get_by_role("dialog", name="Undo the rewind (step 6)")
    expect(undo.get_by_test_id("rewind-file")).to_have_count(3)
    undo.get_by_role("button", name="Undo rewind").click()
    expect(undo).to_be_hidden()
    expect(page.get_by_test_id("rewind-entry")).to_have_count(2)
    screenshot(page, "checkpoints-rewound-and-undone")
    assert not (work / "notes.txt").exists()
    assert (work / "made.txt").read_text() == "made by shell\n" and (work / "other.txt").read_text() == "one\n"

    # The audit log names who rewound, both times.
    page.goto(f"{h.url}/#/settings")
    page.get_by_test_id("audit-filter-tool").fill("rewind")
    page.get_by_test_id("audit-apply").click()
    rows = page.get_by_test_id("audit-row")
    expect(rows).to_have_count(2)
    expect(rows.get_by_test_id("audit-by")).to_have_text(["admin (user)", "admin (user)"])
    expect(rows.first).to_contain_text("to before step 6")
    expect(rows.last).to_contain_text("to before step 3")

    # Settings also says what the checkpoints take: this workspace's seven (five steps, two rewinds).
    kept = page.get_by_test_id("checkpoints-workspace")
    expect(kept).to_have_count(1)
    expect(kept.get_by_test_id("checkpoints-count")).to_have_text("7")
    expect(page.get_by_test_id("checkpoints-disk")).to_have_text(re.compile(r"^[1-9][0-9.]* (bytes|KB|MB)$"))


def test_a_step_shows_its_changes_as_it_runs_and_a_rewind_while_the_session_waits_is_refused_in_words(serve, new_page):
    script = [
        calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "kept\n"})),
        calls(shell("echo waiting")),
        Reply(text="Done."),
    ]
    h = serve(script, policies={WRITE: "ask", SHELL: "ask"})
    session = start_session(h)
    page = new_page(h, path=f"#/s/{session.id}")
    expect(page.get_by_test_id("approval-card")).to_be_visible()
    expect(page.get_by_test_id("step-changes")).to_have_count(0)  # nothing has run yet

    # Allowed, the write runs: its step appears live (checkpoint.created, then its result).
    page.keyboard.press("y")
    first = page.locator('[data-testid="step-changes"][data-step="1"]')
    expect(changed(first, "notes.txt")).to_have_attribute("data-status", "added")

    # The shell command now waits for an answer: a rewind is refused, and says why.
    expect(page.get_by_test_id("approval-card")).to_contain_text("echo waiting")
    first.get_by_test_id("rewind-button").click()
    dialog = page.get_by_role("dialog", name="Rewind to before step 1")
    expect(dialog.get_by_test_id("rewind-file")).to_have_count(1)
    dialog.get_by_test_id("rewind-all").focus()
    page.keyboard.press("y")  # the card's shortcut: in the modal it must not answer the card behind
    dialog.get_by_test_id("rewind-confirm").click()
    expect(dialog.get_by_test_id("rewind-error")).to_contain_text("Not rewound: session")
    expect(dialog.get_by_test_id("rewind-error")).to_contain_text("waiting for an approval")
    assert (h.workspace / "notes.txt").read_text() == "kept\n"
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("approval-card")).to_contain_text("echo waiting")
    assert_still_waiting(h, approvals(h, status="pending")[0].id)


def test_a_step_says_which_files_its_checkpoint_left_out(serve, new_page):
    script = [
        calls(shell("head -c 300 /dev/zero > big1.bin && head -c 300 /dev/zero > big2.bin")),
        calls(ScriptedToolCall(name=WRITE, arguments={"path": "small.txt", "content": "x\n"})),
        Reply(text="Done."),
    ]
    h = serve(script, checkpoints={"max_file_mb": 200 / 1024 / 1024}, **ALLOW)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    page = new_page(h, path=f"#/s/{session.id}")
    second = page.locator('[data-testid="step-changes"][data-step="2"]')
    expect(second.get_by_test_id("step-skipped")).to_have_text("2 files over 200 bytes were not kept.")
    expect(changed(second, "small.txt")).to_have_attribute("data-status", "added")


def test_a_step_whose_checkpoint_could_not_be_taken_says_so(serve, new_page, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the checkpoints folder should be\n")
    script = [calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "x\n"})), Reply(text="Done.")]
    h = serve(script, checkpoints={"dir": blocker / "checkpoints"}, **ALLOW)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    assert (h.workspace / "notes.txt").read_text() == "x\n"  # the step ran all the same
    page = new_page(h, path=f"#/s/{session.id}")
    expect(page.get_by_test_id("step-no-checkpoint-text")).to_contain_text("No checkpoint: ")
    expect(page.get_by_test_id("step-changes")).to_have_count(0)
    expect(page.get_by_test_id("rewind-button")).to_have_count(0)


def test_a_rewind_of_chosen_files_restores_only_those_and_can_fork_the_conversation(serve, new_page):
    h = serve(FIVE_STEPS, **ALLOW)
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    work = h.workspace
    page = new_page(h, path=f"#/s/{session.id}")

    page.locator('[data-testid="step-changes"][data-step="3"]').get_by_test_id("rewind-button").click()
    dialog = page.get_by_role("dialog", name="Rewind to before step 3")
    expect(dialog.get_by_test_id("rewind-file")).to_have_count(3)
    dialog.get_by_label("Only the files I choose").check()
    for path in ("made.txt", "other.txt"):
        dialog.get_by_label(f"Restore {path}").uncheck()
    expect(dialog.get_by_test_id("rewind-confirm")).to_have_text("Rewind 1 file")
    dialog.get_by_label("Also fork the conversation from here").check()
    dialog.get_by_test_id("rewind-confirm").click()
    expect(page.get_by_test_id("rewind-done")).to_contain_text("Restored 1 file; the conversation was forked")
    assert (work / "notes.txt").read_text() == "a\nB\nc\n"
    assert (work / "made.txt").read_text() == "made by shell\n" and (work / "other.txt").read_text() == "one\n"

    # The fork's transcript ends before step 3: the write and the edit, not the command.
    page.get_by_test_id("rewind-fork-link").click()
    expect(page.get_by_test_id("session-title")).to_contain_text("(from before step 3)")
    expect(page.get_by_test_id("tool-call")).to_have_count(2)
    expect(page.get_by_test_id("tool-call-title")).to_have_text(["Write a file", "Edit a file"])
