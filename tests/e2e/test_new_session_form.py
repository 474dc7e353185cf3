"""The new-session form in a real browser (issue 33, item 10): the folder a session works in when
none is chosen is shown with its path, so nobody starts a session in a folder they did not see."""

from __future__ import annotations

from playwright.sync_api import expect

from .dashboard import screenshot


def test_the_new_session_form_shows_the_default_workspace_path_until_another_is_typed(serve, new_page):
    h = serve([])
    page = new_page(h)
    page.get_by_test_id("new-session-toggle").click()
    shown = page.get_by_test_id("new-session-workspace-path")
    expect(shown).to_have_text(f"Works in {h.workspace}")
    screenshot(page, "new-session-default-workspace")
    page.get_by_test_id("new-session-workspace").fill(str(h.workspace / "sub"))
    expect(shown).to_have_count(0)
