"""A running tool's progress on its tool card in real Chromium (issue 14, item 7)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from tests.e2e.dashboard import calls, start_session, wait_session

FEATURES_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "client_features_server.py"


def test_a_running_tools_progress_shows_on_its_card_until_the_result_replaces_it(serve, new_page, tmp_path):
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    h = serve(
        [
            calls(ScriptedToolCall(name="mcp__features__progress_until", arguments={"fifo": str(fifo)})),
            Reply(text="It finished."),
        ],
        servers=(),
        mcp_servers={"features": McpServerConfig(command=sys.executable, args=[str(FEATURES_SERVER)])},
        permissions={"allow": ["mcp__features"]},
    )
    page = new_page(h)
    session = start_session(h, "Do the long job")
    page.goto(f"{h.url}/#/s/{session.id}")

    progress = page.get_by_test_id("tool-call-progress")
    expect(progress).to_contain_text("halfway there (1/2)")
    expect(progress.locator("progress")).to_have_attribute("max", "2")

    # The tool waits on the FIFO: a line lets it finish (opening the writer end cannot block,
    # the tool holds the reader end; a thread keeps the test from hanging if it does not).
    writer = threading.Thread(target=lambda: fifo.write_text("go\n"), daemon=True)
    writer.start()
    expect(page.get_by_test_id("tool-call-result")).to_contain_text("finished: go")
    expect(progress).to_have_count(0)
    wait_session(h, session.id)
    writer.join(timeout=10)
