"""The browser tool server (mcp_servers/browser): a real Chromium against a site served on 127.0.0.1.

One managed server (and so one Chromium) is shared by the module; each test is its own session
with its own workspace, as Overseer's sessions are. Tests that need other options start their own.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import sys
from pathlib import Path

import browser_fixtures
import pytest
from browser_fixtures import (
    BrowserCaller,
    SiteServer,
    closed_port,
    command_line,
    descendants,
    processes_running,
)
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, ImageContent, TextContent
from tool_server_helpers import REPO_ROOT, process_exits_within, text

from mcp_servers.browser import sessions
from mcp_servers.browser.server import create_server

# The fixtures this module uses: pytest finds them by name in the test module.
site = browser_fixtures.site
shared_client = browser_fixtures.shared_client
browser = browser_fixtures.browser
pytestmark = pytest.mark.asyncio(loop_scope="module")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOOLS = {
    "navigate",
    "back",
    "forward",
    "snapshot",
    "click",
    "type",
    "press",
    "select",
    "screenshot",
    "tabs",
    "evaluate",
}
EXIT_SECONDS = 15.0


def ref_of(result: CallToolResult, line_fragment: str) -> str:
    """The ref on the first outline line containing `line_fragment`."""
    for line in text(result).splitlines():
        if line_fragment in line:
            match = re.search(r"\[ref=(e\d+)\]", line)
            if match:
                return match.group(1)
    raise AssertionError(f"no line with a ref contains {line_fragment!r} in:\n{text(result)}")


def chromium_processes(pids: list[int]) -> list[int]:
    """The pids among `pids` that are Chromium processes."""
    return [pid for pid in pids if "chromium" in command_line(pid)]


async def test_tools_are_listed_without_starting_a_browser(tmp_path: Path) -> None:
    before = set(descendants(os.getpid()))
    async with Client(create_server(tmp_path, trust_meta=False, chromium=tmp_path / "no-chromium")) as client:
        listed = (await client.list_tools()).tools
        started = set(descendants(os.getpid())) - before
    assert {tool.name for tool in listed} == TOOLS
    assert chromium_processes(list(started)) == []


async def test_annotations_are_as_declared(browser: BrowserCaller) -> None:
    tools = {tool.name: tool.annotations for tool in (await browser.client.list_tools()).tools}
    hints = {
        name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        for name, a in tools.items()
        if a is not None
    }
    acts = (False, False, False, True)
    assert hints == {
        "navigate": acts,
        "back": acts,
        "forward": acts,
        "click": acts,
        "type": acts,
        "press": acts,
        "select": acts,
        "tabs": acts,
        "snapshot": (True, False, True, False),
        "screenshot": (False, False, False, False),
        "evaluate": (False, True, False, True),
    }


async def test_navigate_returns_url_title_and_an_outline_with_refs(
    browser: BrowserCaller, site: SiteServer
) -> None:
    result = await browser.call("navigate", url=site.url("index.html"))
    assert not result.is_error
    lines = [line.strip() for line in text(result).splitlines()]
    assert lines[:2] == [f"URL: {site.url('index.html')}", "Title: Overseer test site"]
    assert re.search(r'\[ref=e\d+\] heading "Overseer test site" level=1', text(result))
    assert re.search(r'\[ref=e\d+\] link "Order form" -> form\.html', text(result))
    assert "Welcome to the test site." in lines
    assert "hidden from readers" not in text(result)


async def test_filling_and_sending_a_form_shows_the_result_page(
    browser: BrowserCaller, site: SiteServer
) -> None:
    form = await browser.call("navigate", url=site.url("form.html"))
    typed = await browser.call("type", ref=ref_of(form, '"Your name"'), text="Ada")
    await browser.call("type", ref=ref_of(form, '"Note"'), text="by Friday")
    selected = await browser.call("select", ref=ref_of(form, "combobox"), value="Green")
    await browser.call("click", ref=ref_of(form, "checkbox"))
    sent = await browser.call("click", ref=ref_of(form, '"Send order"'))
    assert not typed.is_error and not selected.is_error
    assert re.search(r'combobox "Colour" value="Green"', text(selected))
    assert "Title: Order received" in text(sent)
    assert "Thanks, Ada! Colour: g. Gift wrap: yes. Note: by Friday" in text(sent)


async def test_type_with_submit_sends_the_form(browser: BrowserCaller, site: SiteServer) -> None:
    page = await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("type", ref=ref_of(page, "searchbox"), text="kittens", submit=True)
    assert text(result).startswith(f"URL: {site.url('search?q=kittens')}")
    assert 'heading "Results for kittens"' in text(result)


async def test_press_enter_in_the_focused_field_sends_its_form(
    browser: BrowserCaller, site: SiteServer
) -> None:
    page = await browser.call("navigate", url=site.url("index.html"))
    await browser.call("type", ref=ref_of(page, "searchbox"), text="puppies")
    result = await browser.call("press", key="Enter")
    assert not result.is_error
    assert 'heading "Results for puppies"' in text(result)


async def test_an_unknown_key_is_an_error(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("press", key="NoSuchKey")
    assert result.is_error


async def test_click_without_navigation_returns_the_updated_outline(
    browser: BrowserCaller, site: SiteServer
) -> None:
    page = await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("click", ref=ref_of(page, 'button "Count"'))
    assert "Not clicked yet" in text(page)
    assert "Clicked 1 time(s)" in [line.strip() for line in text(result).splitlines()]


async def test_refs_stay_the_same_across_snapshots_of_one_page(
    browser: BrowserCaller, site: SiteServer
) -> None:
    page = await browser.call("navigate", url=site.url("index.html"))
    await browser.call("click", ref=ref_of(page, 'button "Count"'))
    again = await browser.call("snapshot")
    for fragment in ('heading "Overseer test site"', 'link "About"', "searchbox"):
        assert ref_of(again, fragment) == ref_of(page, fragment)


async def test_a_ref_that_does_not_exist_asks_for_a_new_snapshot(
    browser: BrowserCaller, site: SiteServer
) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("click", ref="e99999")
    assert result.is_error
    assert "snapshot" in text(result)


async def test_a_ref_from_a_page_the_tab_left_is_refused(browser: BrowserCaller, site: SiteServer) -> None:
    index = await browser.call("navigate", url=site.url("index.html"))
    await browser.call("navigate", url=site.url("about.html"))
    result = await browser.call("click", ref=ref_of(index, 'link "Order form"'))
    assert result.is_error
    assert "Title: About" in text(await browser.call("snapshot"))


async def test_a_ref_to_an_element_hidden_since_the_snapshot_asks_for_a_new_snapshot(
    browser: BrowserCaller, site: SiteServer
) -> None:
    page = await browser.call("navigate", url=site.url("index.html"))
    await browser.call("evaluate", js="() => { document.querySelector('button').hidden = true; }")
    result = await browser.call("click", ref=ref_of(page, 'button "Count"'))
    assert result.is_error
    assert "snapshot" in text(result)


async def test_something_that_is_not_a_ref_is_refused(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("click", ref="button:has-text('Count')")
    assert result.is_error


async def test_select_refuses_a_missing_option_and_lists_the_options(
    browser: BrowserCaller, site: SiteServer
) -> None:
    form = await browser.call("navigate", url=site.url("form.html"))
    result = await browser.call("select", ref=ref_of(form, "combobox"), value="Purple")
    assert result.is_error
    assert "'Red', 'Green', 'Blue'" in text(result)


async def test_select_on_something_that_is_not_a_select_is_an_error(
    browser: BrowserCaller, site: SiteServer
) -> None:
    form = await browser.call("navigate", url=site.url("form.html"))
    result = await browser.call("select", ref=ref_of(form, '"Your name"'), value="Ada")
    assert result.is_error


async def test_back_and_forward_move_through_the_tab_history(
    browser: BrowserCaller, site: SiteServer
) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    await browser.call("navigate", url=site.url("about.html"))
    back = await browser.call("back")
    forward = await browser.call("forward")
    assert "Title: Overseer test site" in text(back)
    assert "Title: About" in text(forward)


async def test_back_with_no_earlier_page_is_an_error(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("about.html"))
    first = await browser.call("back")  # a new tab starts at about:blank, which is in its history
    result = await browser.call("back")
    assert "URL: about:blank" in text(first)
    assert result.is_error


async def test_screenshot_returns_a_png_and_saves_it_in_the_workspace(
    browser: BrowserCaller, site: SiteServer
) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("screenshot")
    assert not result.is_error
    note, image = result.content
    assert isinstance(note, TextContent) and isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(PNG_MAGIC)
    match = re.search(r"saved to (screenshots/\S+\.png)", note.text)
    assert match is not None
    saved = browser.workspace / match.group(1)
    assert saved.read_bytes().startswith(PNG_MAGIC)


async def test_two_screenshots_never_overwrite_each_other(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    await browser.call("screenshot")
    await browser.call("screenshot", full_page=True)
    assert len(list((browser.workspace / "screenshots").iterdir())) == 2


async def test_screenshot_refuses_a_screenshots_folder_linked_outside_the_workspace(
    browser: BrowserCaller, site: SiteServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (browser.workspace / "screenshots").symlink_to(outside)
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("screenshot")
    assert result.is_error
    assert list(outside.iterdir()) == []


async def test_tabs_open_switch_list_and_close(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    opened = await browser.call("tabs", action="new")
    await browser.call("navigate", url=site.url("about.html"))
    listed = await browser.call("tabs", action="list")
    switched = await browser.call("tabs", action="switch", index=0)
    closed = await browser.call("tabs", action="close", index=1)
    assert "about:blank" in text(opened)
    assert text(listed).splitlines()[1:] == [
        f"  0: Overseer test site - {site.url('index.html')}",
        f"* 1: About - {site.url('about.html')}",
    ]
    assert "Title: Overseer test site" in text(switched)
    assert text(closed).splitlines()[-1] == f"* 0: Overseer test site - {site.url('index.html')}"


async def test_closing_the_active_tab_makes_another_one_active(
    browser: BrowserCaller, site: SiteServer
) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    await browser.call("tabs", action="new")
    await browser.call("navigate", url=site.url("about.html"))
    await browser.call("tabs", action="close")
    result = await browser.call("snapshot")
    assert "Title: Overseer test site" in text(result)


async def test_switching_to_a_tab_that_does_not_exist_is_an_error(
    browser: BrowserCaller, site: SiteServer
) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("tabs", action="switch", index=5)
    assert result.is_error


async def test_tabs_takes_no_url_so_opening_a_site_always_goes_through_navigate(
    browser: BrowserCaller,
) -> None:
    tools = {t.name: t for t in (await browser.client.list_tools()).tools}
    assert "url" not in tools["tabs"].input_schema["properties"]
    # An extra url argument opens nothing: the new tab stays blank.
    result = await browser.call("tabs", action="new", url="http://127.0.0.1:9/")
    assert text(result).startswith("URL: about:blank")


async def test_evaluate_returns_the_result_as_json(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    expression = await browser.call("evaluate", js="document.title")
    function = await browser.call("evaluate", js="() => ({links: document.links.length, ok: true})")
    assert text(expression) == '"Overseer test site"'
    assert text(function) == '{"links": 2, "ok": true}'


async def test_a_script_that_throws_is_an_error_result(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("evaluate", js="() => { throw new Error('boom') }")
    assert result.is_error
    assert "boom" in text(result)


async def test_a_large_script_result_is_cut_and_says_so(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("index.html"))
    result = await browser.call("evaluate", js="'x'.repeat(100000)")
    assert len(text(result)) < 21_000
    assert "result cut" in text(result)


async def test_a_long_page_outline_is_cut_and_says_so(browser: BrowserCaller, site: SiteServer) -> None:
    await browser.call("navigate", url=site.url("long?lines=5000"))
    result = await browser.call("snapshot")
    assert len(text(result)) < 41_000
    assert "outline cut at 40000 characters" in text(result)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<h1>x</h1>",
        "chrome://settings",
        "example.com",
    ],
)
async def test_a_url_that_is_not_http_is_refused(browser: BrowserCaller, url: str) -> None:
    result = await browser.call("navigate", url=url)
    assert result.is_error
    assert "only http:// and https://" in text(result)


async def test_about_blank_is_allowed(browser: BrowserCaller) -> None:
    result = await browser.call("navigate", url="about:blank")
    assert not result.is_error
    assert text(result).startswith("URL: about:blank")


async def test_an_unreachable_page_names_the_url_and_the_cause(
    browser: BrowserCaller, site: SiteServer
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/nowhere"
    result = await browser.call("navigate", url=url)
    after = await browser.call("navigate", url=site.url("about.html"))
    assert result.is_error
    assert url in text(result) and "net::ERR_CONNECTION_REFUSED" in text(result)
    assert not after.is_error, "the error page must not interrupt the next navigation"


async def test_an_http_error_status_is_reported_with_the_page(
    browser: BrowserCaller, site: SiteServer
) -> None:
    result = await browser.call("navigate", url=site.url("no-such-page.html"))
    assert not result.is_error
    assert "HTTP status: 404" in text(result)


async def test_sessions_do_not_share_cookies(browser: BrowserCaller, site: SiteServer) -> None:
    other = browser.as_session(f"{browser.session_id}-other")
    await browser.call("navigate", url=site.url("login?user=alice"))
    mine = await browser.call("navigate", url=site.url("whoami"))
    theirs = await other.call("navigate", url=site.url("whoami"))
    assert "Signed in as alice" in text(mine)
    assert "Nobody is signed in" in text(theirs)


async def test_the_least_recently_used_session_is_closed_beyond_the_bound(
    browser: BrowserCaller, site: SiteServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sessions, "MAX_SESSIONS", 2)
    await browser.call("navigate", url=site.url("login?user=alice"))
    for n in range(2):
        await browser.as_session(f"{browser.session_id}-{n}").call("navigate", url="about:blank")
    result = await browser.call("navigate", url=site.url("whoami"))
    assert "Nobody is signed in" in text(result), "the evicted session starts again with no cookies"


async def test_the_timeout_applies_to_the_document_not_to_a_stalled_image(
    site: SiteServer, tmp_path: Path
) -> None:
    async with Client(create_server(tmp_path, trust_meta=False, navigation_timeout=1)) as client:
        stalled_document = await client.call_tool("navigate", {"url": site.url("slow")})
        stalled_image = await client.call_tool("navigate", {"url": site.url("stalled.html")})
    assert stalled_document.is_error
    assert site.url("slow") in text(stalled_document) and "timeout" in text(stalled_document)
    assert not stalled_image.is_error
    assert 'heading "The text arrived"' in text(stalled_image)


async def test_a_script_that_never_finishes_is_abandoned_and_its_frozen_tab_closed(
    site: SiteServer, tmp_path: Path
) -> None:
    async with Client(create_server(tmp_path, trust_meta=False, navigation_timeout=1)) as client:
        await client.call_tool("navigate", {"url": site.url("about.html")})
        frozen = await client.call_tool("evaluate", {"js": "() => { while (true) {} }"})
        after = await client.call_tool("evaluate", {"js": "1 + 1"})
    assert frozen.is_error
    assert "tab was closed" in text(frozen)
    assert text(after) == "2", "the next call gets a working tab"


async def test_a_missing_chromium_is_an_error_naming_the_option(tmp_path: Path) -> None:
    async with Client(create_server(tmp_path, trust_meta=False, chromium=tmp_path / "no-chromium")) as client:
        result = await client.call_tool("navigate", {"url": "about:blank"})
    assert result.is_error
    assert "--chromium" in text(result)


async def test_a_standalone_server_has_one_session_and_saves_in_its_root(
    site: SiteServer, tmp_path: Path
) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    meta = {"overseer/workspace": str(elsewhere)}
    async with Client(create_server(root, trust_meta=False)) as client:
        await client.call_tool(
            "navigate", {"url": site.url("login?user=bob")}, meta={**meta, "overseer/session_id": "a"}
        )
        whoami = await client.call_tool(
            "navigate", {"url": site.url("whoami")}, meta={**meta, "overseer/session_id": "b"}
        )
        await client.call_tool("screenshot", {}, meta=meta)
    assert "Signed in as bob" in text(whoami), "untrusted session ids are ignored"
    assert len(list((root / "screenshots").iterdir())) == 1
    assert list(elsewhere.iterdir()) == []


async def test_leaving_the_client_closes_the_browser(site: SiteServer, tmp_path: Path) -> None:
    before = set(descendants(os.getpid()))
    async with Client(create_server(tmp_path, trust_meta=False)) as client:
        await client.call_tool("navigate", {"url": site.url("about.html")})
        started = chromium_processes(list(set(descendants(os.getpid())) - before))
    assert started
    assert all(process_exits_within(pid, EXIT_SECONDS) for pid in started)


async def test_stdio_server_browses_and_leaves_no_chromium_behind(site: SiteServer, tmp_path: Path) -> None:
    workspace = tmp_path / "stdio-ws"
    workspace.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.browser", "--root", str(workspace)],
        env={"PYTHONPATH": str(REPO_ROOT)},
        cwd=REPO_ROOT,
    )
    async with Client(params) as client:
        page = await client.call_tool("navigate", {"url": site.url("index.html")})
        outline = await client.call_tool("snapshot", {})
        (server_pid,) = processes_running(f"--root {workspace}")
        started = chromium_processes(descendants(server_pid))
    assert "Title: Overseer test site" in text(page)
    assert ref_of(outline, 'heading "Overseer test site"') == ref_of(page, 'heading "Overseer test site"')
    assert started, "the browser runs below the server process"
    assert all(process_exits_within(pid, EXIT_SECONDS) for pid in started)


async def test_help_exits_zero_and_mentions_the_chromium_option() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_servers.browser",
        "--help",
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    stdout, _ = await asyncio.wait_for(proc.communicate(), EXIT_SECONDS)
    assert proc.returncode == 0
    assert "--chromium" in stdout.decode()
