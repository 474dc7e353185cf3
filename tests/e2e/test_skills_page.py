"""The Skills page in a real browser against the real server: the list with status, source,
"always" and shadowing; reading a SKILL.md; creating one from the template (the server's
refusal shown first), editing it and deleting it."""

from __future__ import annotations

from playwright.sync_api import expect

from .dashboard import page_screenshot

GOOD = """---
name: release-notes
description: Write release notes from the merged pull requests.
---

# Release notes

List the merged pull requests since the last tag, grouped by kind.
"""


def skill_row(page, name: str):
    return page.locator(f'[data-testid="skill-row"][data-skill="{name}"]')


def test_the_list_shows_status_source_always_and_which_skill_overrides_another(serve, new_page):
    h = serve([])
    h.host.skills.save(
        "video-cut",
        "---\ndescription: Cut a video\nrequires:\n  bins: [no-such-binary-for-overseer]\n---\nUse ffmpeg.\n",
    )
    h.host.skills.save("house-rules", "---\ndescription: Our house rules\nalways: true\n---\nBe brief.\n")
    h.host.skills.save("summarize", "---\ndescription: Summaries, our way\n---\nThree bullets, no more.\n")
    page = new_page(h)
    page.get_by_test_id("nav-skills").click()

    review = skill_row(page, "code-review")
    expect(review.get_by_test_id("skill-status")).to_have_text("available")
    expect(review.get_by_test_id("skill-source")).to_have_text("built-in")
    expect(review.get_by_test_id("skill-always")).to_have_count(0)
    cut = skill_row(page, "video-cut")
    expect(cut.get_by_test_id("skill-status")).to_have_attribute("data-available", "false")
    expect(cut.get_by_test_id("skill-status")).to_contain_text("missing command no-such-binary-for-overseer")
    expect(skill_row(page, "house-rules").get_by_test_id("skill-always")).to_have_text("always")
    summarize = skill_row(page, "summarize")
    expect(summarize.get_by_test_id("skill-source")).to_have_text("yours")
    expect(summarize.get_by_test_id("skill-shadows")).to_have_text("overrides the built-in one")

    review.click()
    text = page.get_by_test_id("skill-text")
    expect(text).to_contain_text("name: code-review")
    expect(text).to_contain_text("# Code review")
    expect(page.get_by_test_id("skill-delete")).to_have_count(0)  # a built-in cannot be deleted
    expect(page.get_by_test_id("skill-edit")).to_have_text("Edit as your own copy")


def test_a_skill_is_created_from_the_template_edited_and_deleted(serve, new_page):
    h = serve([])
    page = new_page(h, path="#/skills")
    page.get_by_test_id("skill-new").click()
    page.get_by_test_id("skill-name").fill("release-notes")
    content = page.get_by_test_id("skill-content")
    expect(content).to_contain_text("name: release-notes")
    expect(content).to_contain_text("## Steps")

    content.fill("---\nname: release-notes\n---\nNo description here.\n")
    page.get_by_test_id("skill-save").click()
    expect(page.get_by_test_id("skill-error")).to_contain_text("description")
    expect(skill_row(page, "release-notes")).to_have_count(0)
    assert not (h.data_dir / "skills" / "release-notes").exists()

    content.fill(GOOD)
    page.get_by_test_id("skill-save").click()
    row = skill_row(page, "release-notes")
    expect(row.get_by_test_id("skill-source")).to_have_text("yours")
    expect(row.get_by_test_id("skill-status")).to_have_text("available")
    expect(page.get_by_test_id("skill-text")).to_contain_text("grouped by kind")
    assert (h.data_dir / "skills" / "release-notes" / "SKILL.md").read_text() == GOOD

    page.get_by_test_id("skill-edit").click()
    editor = page.get_by_test_id("skill-content")
    expect(editor).to_contain_text("description: Write release notes from the merged pull requests.")
    editor.fill(GOOD.replace("grouped by kind", "grouped by kind, newest first"))
    page.get_by_test_id("skill-save").click()
    expect(page.get_by_test_id("skill-text")).to_contain_text("newest first")
    assert h.host.skills.get("release-notes").body.strip().endswith("newest first.")
    page_screenshot(page, "skills-page")

    page.get_by_test_id("skill-delete").click()
    page.get_by_test_id("skill-delete-confirm").click()
    expect(skill_row(page, "release-notes")).to_have_count(0)
    assert not (h.data_dir / "skills" / "release-notes").exists()
