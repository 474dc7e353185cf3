"""`overseer serve` says when it is ready (backend/api/ready.py): one line, printed once the HTTP
server accepts connections, with the dashboard's URL and how to sign in."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import httpx

from backend.api.ready import READY_PREFIX, ready_line
from backend.testing.harness import only_servers_env
from backend.testing.process import OverseerProcess

TOKEN = "ready-line-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_prints_one_ready_line_with_the_dashboard_url_then_answers_on_it(tmp_path: Path):
    port = free_port()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {
        **os.environ,
        "OVERSEER_DATA_DIR": str(tmp_path / "data"),
        "OVERSEER_WORKSPACE": str(workspace),
        "OVERSEER_TOKEN": TOKEN,
        **only_servers_env(),
    }
    server = OverseerProcess(["serve", "--port", str(port)], env)
    try:
        line = server.wait_for_line(lambda text: text.startswith(READY_PREFIX), what="the ready line", timeout=120)
        url = f"http://127.0.0.1:{port}/"
        assert line.strip() == ready_line(url=url, token_link=f"{url}login?token={TOKEN}")
        # Said once the socket listens: the very next request is answered, the sign-in link works.
        assert httpx.get(f"{url}api/health", timeout=10).status_code == 200
        signed_in = httpx.get(f"{url}login?token={TOKEN}", timeout=10, follow_redirects=False)
        assert signed_in.status_code in (302, 303, 307) and "overseer_session" in signed_in.headers.get("set-cookie", "")
    finally:
        server.stop()
    assert sum(text.startswith(READY_PREFIX) for text in server.seen) == 1
    assert not any("login?token=" in text for text in server.seen if not text.startswith(READY_PREFIX))


def test_with_users_the_ready_line_asks_for_a_username_and_password_not_a_token():
    line = ready_line(url="http://127.0.0.1:8000/", token_link=None)
    assert line.startswith(READY_PREFIX) and "http://127.0.0.1:8000/" in line
    assert "username and password" in line and "token" not in line
