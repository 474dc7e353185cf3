"""A pending approval survives a SIGKILL of `overseer serve` and is answered from the dashboard."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, expect

from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall

REPO = Path(__file__).resolve().parents[2]
TOKEN = "restart-test-token"


def script(request: ModelRequest) -> Reply:
    """Stateless, so it serves both server processes."""
    results = request.tool_results()
    if not results:
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo ran >> count.txt"})])
    return Reply(text=f"finished: {results[0].text}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(predicate, timeout: float = 60, what: str = "condition"):
    """Poll a condition with a bound (a server process is out of reach of any event we could await)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
            if value:
                return value
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def serve(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "backend.cli", "serve"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def test_a_pending_approval_survives_a_server_kill_and_is_answered_from_the_dashboard(tmp_path, browser: Browser):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with ScriptedModelServer(script) as model:
        env = {
            **os.environ,
            "OVERSEER_DATA_DIR": str(tmp_path / "data"),
            "OVERSEER_WORKSPACE": str(workspace),
            "OVERSEER_MODEL": "openai/scripted",
            "OVERSEER_API_BASE": model.openai_base,
            "OVERSEER_API_KEY": "scripted",
            "OVERSEER_PORT": str(port),
            "OVERSEER_TOKEN": TOKEN,
        }
        api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        first = serve(env)
        try:
            until(lambda: api.get("/api/health").status_code == 200, what="the first server")
            session_id = api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
            pending = until(lambda: api.get("/api/approvals", params={"status": "pending"}).json(), what="approval")
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        assert not (workspace / "count.txt").exists()

        second = serve(env)
        try:
            until(lambda: api.get("/api/health").status_code == 200, what="the second server")
            assert [a["id"] for a in api.get("/api/approvals", params={"status": "pending"}).json()] == [pending[0]["id"]]
            page = browser.new_page()
            page.goto(f"{url}/login?token={TOKEN}")
            card = page.get_by_test_id("approval-card").first
            expect(card.get_by_test_id("arg-command")).to_have_text("echo ran >> count.txt")
            page.get_by_test_id("approve-once").click()
            until(lambda: api.get(f"/api/sessions/{session_id}").json()["status"] == "completed", what="completion")
            page.close()
            approval = api.get(f"/api/approvals/{pending[0]['id']}").json()
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(20)
    assert (workspace / "count.txt").read_text() == "ran\n"
    assert (approval["status"], approval["decided_by"]) == ("allowed", "user")
