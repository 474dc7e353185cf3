"""A server's request to run the model (MCP sampling) as a prompt to review, in real Chromium (issue 14, item 4).

A real SDK server process asks for a haiku from inside its tool (handshake era,
`create_message`); the card shows the server's system prompt, its message and its image; the
person edits the text, tries a token limit above the one allowed (the form refuses it), then
runs it; the scripted model receives the edited prompt and the server the model's answer,
which the session's timeline shows too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from tests.e2e.dashboard import calls, start_session, wait_session

SAMPLING_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "sampling_server.py"
HAIKU = "Old pond, a toad jumps"


def test_a_servers_prompt_is_reviewed_edited_and_run_once_on_the_card(serve, new_page):
    h = serve(
        [
            calls(ScriptedToolCall(name="mcp__sample__haiku", arguments={"topic": "frogs"})),
            Reply(text=HAIKU),
            Reply(text="Here is your haiku."),
        ],
        servers=(),
        mcp_servers={"sample": McpServerConfig(command=sys.executable, args=[str(SAMPLING_SERVER), "--legacy"])},
        permissions={"allow": ["mcp__sample"]},
    )
    page = new_page(h)
    session = start_session(h, "Write a haiku")
    page.goto(f"{h.url}/#/s/{session.id}")

    card = page.get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-kind", "sampling")
    expect(card.get_by_test_id("approval-title")).to_have_text("sample asks to run the model")
    expect(card.get_by_test_id("sampling-summary")).to_contain_text("it asked for 50000")
    expect(card.get_by_test_id("sampling-system")).to_have_value("You write haiku.")
    expect(card.get_by_test_id("sampling-text-0")).to_have_value("A haiku about frogs.")
    expect(card.get_by_test_id("sampling-media-1")).to_contain_text("image image/png")

    card.get_by_test_id("sampling-text-0").fill("A haiku about toads.")
    # Above the limit shown: the form will not send it, and the request still waits.
    card.get_by_test_id("sampling-max-tokens").fill("9999")
    card.get_by_test_id("sampling-run").click()
    assert card.get_by_test_id("sampling-max-tokens").evaluate("el => el.validity.rangeOverflow")
    expect(card).to_have_attribute("data-kind", "sampling")

    card.get_by_test_id("sampling-max-tokens").fill("80")
    expect(card.get_by_test_id("sampling-run")).to_have_text("Run it once, as edited")
    card.get_by_test_id("sampling-run").click()
    expect(page.get_by_test_id("approval-decided")).to_contain_text("model run for sample")
    expect(page.get_by_text(f"answered sample's prompt (as you edited it): {HAIKU}")).to_be_visible()

    done = wait_session(h, session.id)
    assert done.status == "completed", done.error
    [sampled] = [r for r in h.model.requests if not r.tools]
    assert sampled.raw["max_tokens"] == 80
    [user] = [m for m in sampled.messages if m["role"] == "user"]
    assert user["content"][0]["text"] == "A haiku about toads."
    [tool] = [m for m in h.call(h.host.store.list_messages(session.id)) if m.role == "tool"]
    assert json.loads(tool.content)["text"] == HAIKU
