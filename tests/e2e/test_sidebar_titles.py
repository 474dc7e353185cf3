"""The sidebar's titles keep priority over its pills (issue 33, item 12), in real Chromium at
1024×768 and 390×844: badges and status pills squeezed titles to "T…" or nothing, archived rows
lost theirs, and two sessions read the same truncated title."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from backend.domain.models import Usage
from backend.domain.session_options import SessionOptions

from .dashboard import screenshot

TITLES = (
    "Quarterly report for the finance team, draft one",
    "Quarterly report for the finance team, draft two",
    "Archived migration plan for the billing database",
)
SHOWN = 20
"""Characters of each title that must show whole, before any ellipsis."""

TITLE_ROOM = """el => {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = getComputedStyle(el).font;
  return {
    room: el.clientWidth,
    needed: ctx.measureText(el.textContent.slice(0, %d)).width,
    whole: el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1,
  };
}""" % SHOWN


@pytest.mark.parametrize("viewport", [{"width": 1024, "height": 768}, {"width": 390, "height": 844}], ids=["1024", "390"])
def test_each_sidebar_row_shows_its_title_beside_badges_and_pills_and_names_it_whole(serve, new_page, tmp_path, viewport):
    (tmp_path / "reviews").mkdir()
    agents = [{"id": "reviewer", "name": "Code reviewer", "model": "openai/scripted", "workspace": str(tmp_path / "reviews")}]
    h = serve([], agents=agents)
    ids = []
    for title in TITLES:
        session = h.call(h.host.runner.create(options=SessionOptions(title=title, agent="reviewer")))
        h.call(h.host.runner.add_usage(session.id, Usage(input_tokens=1200, output_tokens=300, cost_usd=12.34)))
        ids.append(session.id)
    h.call(h.host.runner.edit(ids[2], lambda s: {"archived": True}))

    page = new_page(h, viewport=viewport)
    if viewport["width"] < 800:
        page.get_by_test_id("sidebar-toggle").click()
    page.get_by_test_id("show-archived").check()
    for session_id, title in zip(ids, TITLES):
        row = page.locator(f'[data-testid="session-row"][data-session-id="{session_id}"]')
        expect(row.get_by_test_id("agent-badge")).to_have_text("Code reviewer")
        expect(row.get_by_test_id("session-row-cost")).to_have_text("$12.34")
        name = row.locator(".session-title")
        expect(name).to_have_attribute("title", re.compile("^" + re.escape(title)))
        expect(row).to_have_accessible_name(re.compile(re.escape(title)))
        measured = name.evaluate(TITLE_ROOM)
        assert measured["needed"] > 0 and measured["room"] >= measured["needed"], (title, viewport, measured)
        assert measured["whole"], (title, viewport, measured)  # so "draft one" and "draft two" read apart
    expect(page.locator(f'[data-session-id="{ids[2]}"]').get_by_test_id("archived-badge")).to_be_visible()
    screenshot(page, f"sidebar-titles-{viewport['width']}")
