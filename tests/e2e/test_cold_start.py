"""A cold start shows progress and the real standing rules (issue 16), in a real browser: while
a server is still starting, the session's first run says so (each server starting / ready, the
model waiting for them) instead of a bare "Running", and "Runs without asking" lists what does."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from backend.testing import Reply

from .dashboard import start_session

HELD_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "held_server.py"


def test_the_first_run_shows_each_server_starting_then_the_answer_and_the_real_standing_rules(serve, new_page, tmp_path):
    cue = tmp_path / "cue"
    os.mkfifo(cue)
    held = McpServerConfig(command=sys.executable, args=[str(HELD_SERVER), str(cue)])
    h = serve([Reply(text="Ready when you are.")], servers=("file",), mcp_servers={"held": held})
    page = new_page(h)
    session = start_session(h, "hello")
    page.goto(f"{h.url}/#/s/{session.id}")

    progress = page.get_by_test_id("startup-progress")
    expect(progress.locator('[data-server="held"]')).to_have_attribute("data-state", "starting")
    expect(progress.locator('[data-server="held"]')).to_have_text("held: starting…")
    expect(progress.locator('[data-server="file"]')).to_have_attribute("data-state", "ready")
    expect(progress.get_by_test_id("startup-model")).to_have_text("model: waits for the servers")
    # The file server's readers run unasked by default: the strip says so, not "nothing".
    expect(page.get_by_test_id("standing-tools")).to_contain_text("file.read_file")
    assert len(h.model.requests) == 0

    with open(cue, "wb") as release:  # the held server's open returns: it becomes the echo server
        release.write(b"go")

    expect(page.get_by_test_id("message-assistant").last).to_contain_text("Ready when you are.")
    expect(progress).to_have_count(0)
    expect(page.get_by_test_id("session-view").get_by_test_id("status-badge")).to_have_text("Done")
