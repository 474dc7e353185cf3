"""A tool's content marked for one audience, on its tool card in real Chromium (issue 35, item 2):
what the tool meant for the person alone is on the card, said to be theirs and not the model's
(its image captioned so), and what it meant for the model alone is marked as such; live, and after
a reload."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import expect

from backend.domain.tools import FOR_MODEL_ONLY, FOR_USER_ONLY
from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from tests.e2e.dashboard import ARTIFACTS, calls, start_session, wait_session

FIXTURES = Path(__file__).resolve().parents[1] / "engine" / "models" / "fixtures"
sys.path.insert(0, str(FIXTURES))
from peer_media_server import FOR_BOTH, FOR_MODEL, FOR_USER  # noqa: E402


def test_content_for_the_person_alone_is_on_the_tool_card_marked_as_theirs_and_the_models_is_marked_too(serve, new_page):
    h = serve(
        [calls(ScriptedToolCall(name="mcp__peer__annotated", arguments={}, id="annotated")), Reply(text="Built.")],
        servers=(),
        mcp_servers={"peer": McpServerConfig(command=sys.executable, args=[str(FIXTURES / "peer_media_server.py")])},
        permissions={"allow": ["mcp__peer"]},
    )
    page = new_page(h, viewport={"width": 1440, "height": 900})
    session = start_session(h, "Run the build")
    page.goto(f"{h.url}/#/s/{session.id}")
    wait_session(h, session.id)

    for shown in ("live", "reloaded"):
        expect(page.get_by_test_id("status-badge").first).to_have_text("Done")
        card = page.locator('[data-testid="tool-call"][data-tool-call-id="annotated"]')
        card.locator("summary").click()
        result = card.get_by_test_id("tool-call-result")
        expect(result).to_be_visible()
        text = result.inner_text()
        # What the model read first, its own part under its mark, then the person's under theirs.
        assert text.index(FOR_BOTH) < text.index(FOR_MODEL_ONLY) < text.index(FOR_MODEL)
        assert text.index(FOR_MODEL) < text.index(FOR_USER_ONLY) < text.index(FOR_USER)
        figure = page.get_by_test_id("tool-media-for-you")
        expect(figure).to_contain_text("For you alone: not sent to the model")
        image = figure.get_by_test_id("tool-media-image")
        page.wait_for_function("img => img.complete && img.naturalWidth === 48", arg=image.element_handle())
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        result.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"issue35-item2-audience-on-the-tool-card-{shown}.png"))
        page.reload()
