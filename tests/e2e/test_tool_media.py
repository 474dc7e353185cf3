"""What a tool returns beyond text, on its tool card in real Chromium: the image drawn from the
host's media route, the audio clip playable; live as the result arrives, and after a reload."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from tests.e2e.dashboard import calls, start_session, wait_session

CONTENT_SERVER = Path(__file__).resolve().parents[1] / "engine" / "models" / "fixtures" / "content_server.py"


def test_an_image_a_tool_returned_is_drawn_on_its_tool_card_and_an_audio_clip_can_be_played(serve, new_page):
    h = serve(
        [
            calls(
                ScriptedToolCall(name="mcp__content__screenshot", arguments={}),
                ScriptedToolCall(name="mcp__content__chime", arguments={}),
            ),
            Reply(text="A red square, and a chime."),
        ],
        servers=(),
        mcp_servers={"content": McpServerConfig(command=sys.executable, args=[str(CONTENT_SERVER)])},
        permissions={"allow": ["mcp__content"]},
    )
    page = new_page(h)
    session = start_session(h, "Take a screenshot and play the chime")
    page.goto(f"{h.url}/#/s/{session.id}")
    wait_session(h, session.id)

    for _shown in ("live", "after a reload"):
        expect(page.get_by_test_id("status-badge").first).to_have_text("Done")
        image = page.get_by_test_id("tool-media-image")
        expect(image).to_be_visible()
        # Drawn, not a broken icon: the browser decoded the 8x8 PNG the tool sent.
        page.wait_for_function("img => img.complete && img.naturalWidth === 8", arg=image.element_handle())
        assert image.get_attribute("src") == f"/api/sessions/{session.id}/media/{_stored_image(h, session.id)}"
        audio = page.get_by_test_id("tool-media-audio")
        expect(audio).to_have_count(1)
        served = audio.evaluate("a => fetch(a.src).then(r => r.status + ' ' + r.headers.get('content-type'))")
        assert served == "200 audio/wav"
        page.reload()


def _stored_image(h, session_id: str) -> str:
    [media] = [m for m in h.call(h.host.store.list_messages(session_id)) for m in m.media if m.kind == "image"]
    return media.name
