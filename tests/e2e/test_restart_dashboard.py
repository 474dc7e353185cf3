"""A pending approval survives a SIGKILL of `overseer serve` and is answered from the dashboard."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, expect
from websockets.sync.client import ClientConnection, connect

from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import only_servers_env
from backend.testing.process import OverseerProcess

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


def serve(env: dict[str, str]) -> OverseerProcess:
    server = OverseerProcess(["serve"], env)
    server.wait_for_line(lambda line: "running on" in line.lower(), what="the server listening")
    return server


def events(url: str) -> ClientConnection:
    ws = connect(url.replace("http", "ws") + f"/ws?token={TOKEN}")
    ws.send(json.dumps({"type": "subscribe", "session_id": None}))
    return ws


def next_event(ws: ClientConnection, matches, timeout: float = 30) -> dict[str, Any]:
    while True:
        event = json.loads(ws.recv(timeout=timeout))
        if matches(event):
            return event


def test_a_pending_approval_survives_a_server_kill_and_is_answered_from_the_dashboard(tmp_path: Path, browser: Browser):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    url = f"http://127.0.0.1:{free_port()}"
    with ScriptedModelServer(script) as model:
        env = {
            **os.environ,
            "OVERSEER_DATA_DIR": str(tmp_path / "data"),
            "OVERSEER_WORKSPACE": str(workspace),
            "OVERSEER_MODEL": "openai/scripted",
            "OVERSEER_API_BASE": model.openai_base,
            "OVERSEER_API_KEY": "scripted",
            "OVERSEER_PORT": url.rsplit(":", 1)[1],
            "OVERSEER_TOKEN": TOKEN,
            **only_servers_env("shell"),  # the one server the script calls
        }
        api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        first = serve(env)
        try:
            with events(url) as ws:
                next_event(ws, lambda e: e.get("type") == "subscribed")
                session_id = api.post("/api/sessions", json={"prompt": "count"}).json()["id"]
                pending = next_event(ws, lambda e: e.get("type") == "approval.requested")["data"]
        finally:
            first.kill()
        assert not (workspace / "count.txt").exists()

        second = serve(env)
        try:
            assert [a["id"] for a in api.get("/api/approvals", params={"status": "pending"}).json()] == [pending["id"]]
            with events(url) as ws:
                next_event(ws, lambda e: e.get("type") == "subscribed")
                page = browser.new_page()
                page.goto(f"{url}/login?token={TOKEN}")
                card = page.get_by_test_id("approval-card").first
                expect(card.get_by_test_id("arg-command")).to_have_text("echo ran >> count.txt")
                page.get_by_test_id("approve-once").click()
                next_event(
                    ws,
                    lambda e: e.get("session_id") == session_id
                    and e.get("type") == "session.status"
                    and e["data"]["status"] == "completed",
                )
                page.close()
            approval = api.get(f"/api/approvals/{pending['id']}").json()
        finally:
            second.stop()
    assert (workspace / "count.txt").read_text() == "ran\n"
    assert (approval["status"], approval["decided_by"]) == ("allowed", "user")
