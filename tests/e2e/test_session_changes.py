"""A session's Changes tab in real Chromium when it has no checkpoints to read (issue 16, then
issue 33 item 8): it says why instead of guessing the changes from the calls' arguments. With
checkpoints it shows each step's real diff (tests/e2e/test_checkpoints.py and
tests/e2e/test_changes_real_diffs.py, which also covers checkpoints turned off)."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply, ScriptedToolCall

from .dashboard import WRITE, calls, start_session, wait_session


def test_a_session_that_changed_no_file_says_so(serve, new_page):
    h = serve([Reply(text="Nothing to change.")])
    session = start_session(h)
    wait_session(h, session.id)
    page = new_page(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("changes-empty")).to_have_text("No step of this session has changed the workspace.")


def test_a_session_whose_checkpoint_could_not_be_taken_says_its_change_was_not_recorded(serve, new_page, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the checkpoints folder should be\n")
    script = [calls(ScriptedToolCall(name=WRITE, arguments={"path": "notes.txt", "content": "x\n"})), Reply(text="Done.")]
    h = serve(script, checkpoints={"dir": blocker / "checkpoints"}, policies={WRITE: "always_allow"})
    session = start_session(h)
    assert wait_session(h, session.id).status == "completed"
    page = new_page(h, path=f"#/s/{session.id}")
    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("changes-unrecorded")).to_contain_text(
        "No checkpoint could be taken for the step that may have changed the workspace"
    )
    expect(page.get_by_test_id("changes-file")).to_have_count(0)  # no diff guessed from the arguments
