"""Page outlines (mcp_servers/browser/snapshot.py and its page script): rendering, and real pages."""

from __future__ import annotations

import re

import browser_fixtures
import pytest
from browser_fixtures import BrowserCaller, SiteServer
from tool_server_helpers import text

from mcp_servers.browser.snapshot import cut, describe_item, render_tree

# The fixtures this module uses: pytest finds them by name in the test module.
site = browser_fixtures.site
shared_client = browser_fixtures.shared_client
browser = browser_fixtures.browser
in_module_loop = pytest.mark.asyncio(loop_scope="module")
"""For tests that use the module's shared browser server."""


def outline_lines(page_text: str) -> list[str]:
    """The outline part of a tool result (after the URL/Title header), stripped of indentation."""
    return [line.strip() for line in page_text.split("\n\n", 1)[1].splitlines()]


def test_nested_items_are_indented_and_text_only_items_are_inlined() -> None:
    tree = [
        {"role": "heading", "name": "Title", "ref": "e1", "level": 1},
        "\nIntro text\n",
        {
            "role": "list",
            "name": "",
            "children": ["\n", {"role": "listitem", "name": "", "children": ["One"]}],
        },
        {"role": "form", "name": "", "children": [{"role": "button", "name": "Go", "ref": "e2"}]},
    ]
    assert render_tree(tree) == [
        '[ref=e1] heading "Title" level=1',
        "Intro text",
        "list:",
        "  listitem: One",
        "form:",
        '  [ref=e2] button "Go"',
    ]


def test_block_breaks_split_text_and_inline_text_stays_on_one_line() -> None:
    assert render_tree(["\n Hello  world \n\nSecond line"]) == ["Hello  world", "Second line"]


def test_an_item_line_carries_its_state() -> None:
    item = {
        "role": "combobox",
        "name": 'Size "EU"',
        "ref": "e7",
        "value": "M",
        "options": ["S", "M"],
        "moreOptions": 3,
        "disabled": True,
        "required": True,
    }
    assert describe_item(item) == (
        '[ref=e7] combobox "Size \\"EU\\"" value="M" options=["S", "M"] (+3 more) disabled required'
    )
    assert describe_item({"role": "checkbox", "name": "Agree", "checked": False, "ref": "e1"}) == (
        '[ref=e1] checkbox "Agree" unchecked'
    )
    assert describe_item({"role": "link", "name": "Docs", "href": "/docs", "ref": "e2"}) == (
        '[ref=e2] link "Docs" -> /docs'
    )


def test_a_long_outline_is_cut_at_a_line_break_and_says_how_much_is_missing() -> None:
    outline = "\n".join(f"line {n:04d}" for n in range(1000))
    result = cut(outline, 100)
    kept, note = result.rsplit("\n", 1)
    # Ten 9-character lines and their breaks fill 100 characters; the last break is dropped.
    assert kept.splitlines() == [f"line {n:04d}" for n in range(10)]
    assert f"{len(outline) - len(kept)} more not shown" in note


def test_a_short_outline_is_not_cut() -> None:
    assert cut("a\nb", 100) == "a\nb"


@in_module_loop
async def test_a_real_page_outline_shows_what_a_reader_sees(browser: BrowserCaller, site: SiteServer) -> None:
    result = await browser.call("navigate", url=site.url("widgets.html"))
    lines = outline_lines(text(result))
    assert "Inside a display-contents box" in lines
    assert "Slotted words" in lines
    assert "listitem: Apples" in lines
    assert ["Line one", "Line two"] == [line for line in lines if line.startswith("Line ")]
    assert 'iframe "Embedded frame"' in lines
    for hidden in ("Decoration only", "Folded-away text", "Invisible words", "hunter2", "inside the frame"):
        assert hidden not in text(result)
    assert re.search(r'\[ref=e\d+\] textbox "Password" value="•{7}"', text(result))
    assert re.search(r'\[ref=e\d+\] tab "First tab"', text(result))
    assert re.search(r'\[ref=e\d+\] checkbox "Agree" checked', text(result))


@in_module_loop
async def test_labels_name_their_controls_without_repeating_as_text(
    browser: BrowserCaller, site: SiteServer
) -> None:
    result = await browser.call("navigate", url=site.url("form.html"))
    lines = outline_lines(text(result))
    assert "Your name" not in lines and "Gift wrap" not in lines
    assert re.search(r'\[ref=e\d+\] textbox "Your name" value="" required', text(result))
    assert re.search(r'\[ref=e\d+\] checkbox "Gift wrap" unchecked', text(result))


@in_module_loop
async def test_an_element_inside_a_shadow_root_can_be_clicked_by_ref(
    browser: BrowserCaller, site: SiteServer
) -> None:
    page = await browser.call("navigate", url=site.url("widgets.html"))
    ref = re.search(r'\[ref=(e\d+)\] button "Shadow button"', text(page)).group(1)  # type: ignore[union-attr]
    result = await browser.call("click", ref=ref)
    assert "Shadow clicked" in outline_lines(text(result))


@in_module_loop
async def test_a_copied_element_gets_a_ref_of_its_own(browser: BrowserCaller, site: SiteServer) -> None:
    page = await browser.call("navigate", url=site.url("widgets.html"))
    await browser.call(
        "evaluate", js="() => { const row = document.getElementById('row'); row.after(row.cloneNode(true)); }"
    )
    again = await browser.call("snapshot")
    refs = re.findall(r'\[ref=(e\d+)\] button "Row action"', text(again))
    original = re.findall(r'\[ref=(e\d+)\] button "Row action"', text(page))
    assert len(refs) == 2 and len(set(refs)) == 2
    assert refs[0] == original[0]
