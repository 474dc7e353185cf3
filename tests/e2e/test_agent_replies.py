"""Agent replies in real Chromium (issue 16): Markdown that renders (lists, code, links) and never
runs what the model wrote as HTML, and the model's thinking collapsed above its answer, live while
it streams and from the stored message after a reload."""

from __future__ import annotations

import threading

from playwright.sync_api import expect

from backend.testing import Reply

from .dashboard import screenshot, start_session, wait_session

THOUGHT = "The person wants steps. I should list them, show the command, and link the docs."
REPLY = """## Setting it up

Three steps:

1. Install the package
2. Run **the** command below
3. Read the [docs](https://example.com/docs)

```python
print("hello")
```

- `inline code` and *emphasis*
- a [sneaky link](javascript:alert(1))

> quoted <img src=x onerror="window.__pwned = 1">

<script>window.__pwned = 2</script>
"""


def test_a_reply_renders_as_markdown_under_its_thinking_and_html_in_it_stays_text(serve, new_page):
    release = threading.Event()
    # Held after the role chunk and the three reasoning chunks: the answer has not started yet.
    held = Reply(thinking=THOUGHT, text=REPLY, hang_after_chunks=4, release=release)
    h = serve([held], servers=(), thinking={"enabled": True, "budget_tokens": 2048})
    page = new_page(h)
    try:
        session = start_session(h, "How do I set it up?")
        page.goto(f"{h.url}/#/s/{session.id}")
        h.model.wait_for_requests(1, timeout=60)  # the answer has begun (and is held)

        live = page.get_by_test_id("streaming").get_by_test_id("thinking")
        expect(live.get_by_test_id("thinking-summary")).to_have_text("Thinking…")
        expect(live.get_by_test_id("thinking-text")).to_be_hidden()  # collapsed
        live.get_by_test_id("thinking-summary").click()
        expect(live.get_by_test_id("thinking-text")).to_have_text(THOUGHT)
        screenshot(page, "reply-thinking-live")
    finally:
        release.set()
    assert wait_session(h, session.id).status == "completed"

    answer = page.get_by_test_id("message-assistant").last
    expect(page.get_by_test_id("streaming")).to_have_count(0)
    words = len(THOUGHT.split())
    expect(answer.get_by_test_id("thinking-summary")).to_have_text(f"Thought for {words} words")
    expect(answer.get_by_test_id("thinking-text")).to_be_hidden()
    reply = answer.get_by_test_id("reply-text")
    expect(reply.locator("h5")).to_have_text("Setting it up")  # `##`, under the page's own headings
    expect(reply.locator("ol > li")).to_have_text(["Install the package", "Run the command below", "Read the docs"])
    expect(reply.locator("ol strong")).to_have_text("the")
    expect(reply.locator("pre > code.language-python")).to_have_text('print("hello")')
    expect(reply.locator("ul code")).to_have_text("inline code")
    expect(reply.locator("ul em")).to_have_text("emphasis")
    docs = reply.get_by_role("link", name="docs")
    expect(docs).to_have_attribute("href", "https://example.com/docs")
    expect(docs).to_have_attribute("target", "_blank")
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    # Only http, https and mailto open: the javascript: link is text, like the HTML.
    expect(reply.locator("a")).to_have_count(1)
    expect(reply).to_contain_text("[sneaky link](javascript:alert(1))")
    expect(reply.locator("blockquote")).to_contain_text('<img src=x onerror="window.__pwned = 1">')
    expect(reply).to_contain_text("<script>window.__pwned = 2</script>")
    expect(page.get_by_test_id("transcript").locator("img, script")).to_have_count(0)
    assert page.evaluate("window.__pwned") is None
    screenshot(page, "reply-markdown")

    # From the stored message after a reload: the same reply, its thinking collapsed and there.
    page.reload()
    answer = page.get_by_test_id("message-assistant").last
    expect(answer.get_by_test_id("reply-text").locator("ol > li")).to_have_count(3)
    summary = answer.get_by_test_id("thinking-summary")
    expect(summary).to_have_text(f"Thought for {words} words")
    summary.click()
    expect(answer.get_by_test_id("thinking-text")).to_have_text(THOUGHT)
    assert page.evaluate("window.__pwned") is None
    h.model.assert_all_used()


def test_a_person_turns_thinking_on_with_a_budget_in_settings(serve, new_page):
    # Save tests the connection first (one small call), then the session's turn.
    h = serve([Reply(text="ok"), Reply(thinking="Short thought.", text="done")], servers=())
    page = new_page(h, path="#/settings")
    section = page.get_by_test_id("model-section")
    enabled = section.get_by_test_id("model-thinking-enabled")
    budget = section.get_by_test_id("model-thinking-budget")
    expect(enabled).not_to_be_checked()
    expect(budget).to_be_disabled()

    enabled.check()
    budget.fill("500")
    expect(section.get_by_test_id("model-thinking-error")).to_contain_text("at least 1024")
    expect(section.get_by_test_id("model-save")).to_be_disabled()
    budget.fill("3000")
    expect(section.get_by_test_id("model-thinking-error")).to_have_count(0)
    section.get_by_test_id("model-save").click()
    expect(section.get_by_test_id("model-saved")).to_be_visible()

    done = wait_session(h, start_session(h, "think first").id)
    assert done.status == "completed"
    assert h.model.requests[-1].raw["reasoning_effort"] == "medium"
    page.reload()
    expect(page.get_by_test_id("model-section").get_by_test_id("model-thinking-enabled")).to_be_checked()
    expect(page.get_by_test_id("model-section").get_by_test_id("model-thinking-budget")).to_have_value("3000")


TABLE_REPLY = """Results:

| Tool | Risk | Cost |
|:-----|:----:|-----:|
| `a \\| b` | <b>low</b> | 0.50 |
| [docs](https://example.com/d) | [bad](javascript:alert(1)) | 1 |

```bash
ls -la
```
"""


def test_a_reply_renders_a_table_as_a_table_and_names_a_code_blocks_language(serve, new_page):
    h = serve([Reply(text=TABLE_REPLY)], servers=())
    page = new_page(h)
    session = start_session(h, "Show me a table")
    assert wait_session(h, session.id).status == "completed"
    page.goto(f"{h.url}/#/s/{session.id}")
    reply = page.get_by_test_id("message-assistant").last.get_by_test_id("reply-text")
    table = reply.locator("table")
    expect(table.locator("thead th")).to_have_text(["Tool", "Risk", "Cost"])
    expect(table.locator("tbody tr")).to_have_count(2)
    # An escaped pipe stays in its cell; HTML in a cell is text; a javascript: link is text.
    expect(table.locator("tbody tr").first.locator("td")).to_have_text(["a | b", "<b>low</b>", "0.50"])
    expect(table.locator("tbody b")).to_have_count(0)
    expect(table.locator("a")).to_have_count(1)
    expect(table.get_by_role("link", name="docs")).to_have_attribute("href", "https://example.com/d")
    expect(table.locator("th").nth(1)).to_have_css("text-align", "center")
    expect(table.locator("td").nth(2)).to_have_css("text-align", "right")
    expect(reply).not_to_contain_text("|:-----|")
    expect(reply.get_by_test_id("code-lang")).to_have_text("bash")
    expect(reply.locator("pre > code.language-bash")).to_have_text("ls -la")
    screenshot(page, "reply-table-and-code-language")
