"""The managed policy over REST: readable by every signed-in user, changeable by none. An admin's
attempt to loosen it (an allow for a managed deny, "always allow" turned off, auto-approve turned
off, a server off the allow-list) is a 403 naming the setting and the file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from backend.testing import Reply, ScriptedToolCall
from tests.api.conftest import serve_api

pytestmark = pytest.mark.asyncio(loop_scope="module")

MANAGED = """\
permissions:
  deny: ["Bash(curl *)"]
  ask: ["mcp__github"]
disable_allow_always: true
disable_auto_approve: true
allowed_mcp_servers: [{command: "npx -y @corp/*"}]
"""


@pytest.fixture
def managed(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "managed.yaml"
    path.write_text(MANAGED)
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(path))
    return path


async def pending_approval(api) -> dict:
    sub = api.host.bus.subscribe(None)
    try:
        pending = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        while not pending:
            event = await sub.get(timeout=15)
            if event.type == "approval.requested":
                pending = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        return pending[0]
    finally:
        api.host.bus.unsubscribe(sub)


async def test_the_managed_policy_is_shown_locked_with_its_file_to_a_viewer(tmp_path, pool, managed):
    servers = {"evil": {"command": "npx", "args": ["-y", "evil-mcp"]}}
    async with serve_api(tmp_path, pool, mcp_servers=servers) as api:
        viewer = {"X-API-Key": api.app.state.auth.create_api_key("looker", role="viewer")}
        shown = (await api.anonymous.get("/api/policy/managed", headers=viewer)).json()
        assert shown["active"] is True and shown["source"] == str(managed)
        assert shown["rules"] == [
            {"effect": "deny", "rule": "Bash(curl *)", "setting": "permissions.deny 'Bash(curl *)'"},
            {"effect": "ask", "rule": "mcp__github", "setting": "permissions.ask 'mcp__github'"},
        ]
        assert shown["disable_allow_always"] is True and shown["disable_approve_all"] is False
        assert [b["name"] for b in shown["blocked_servers"]] == ["evil"]
        assert "allowed_mcp_servers" in shown["blocked_servers"][0]["reason"]


async def test_an_admin_cannot_loosen_the_managed_deny_through_the_rules_route(tmp_path, pool, managed):
    async with serve_api(tmp_path, pool) as api:
        before = (await api.client.get("/api/permissions")).json()
        response = await api.client.put("/api/permissions", json={"allow": ["Bash(curl *)"], "ask": [], "deny": []})
        assert response.status_code == 403
        assert response.json()["detail"] == f"locked by managed policy ({managed}: permissions.deny 'Bash(curl *)')"
        assert (await api.client.get("/api/permissions")).json() == before
        assert not api.host.settings.writable_config_file.exists() or "curl" not in api.host.settings.writable_config_file.read_text()


async def test_an_admin_cannot_answer_always_when_the_managed_policy_turns_it_off(tmp_path, pool, managed):
    async with serve_api(tmp_path, pool) as api:
        write = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "x"})
        api.model.push(Reply(tool_calls=[write]), Reply(text="done"))
        session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
        approval = await pending_approval(api)
        url = f"/api/approvals/{approval['id']}"
        always = await api.client.post(url, json={"decision": "allow_always"})
        assert always.status_code == 403
        assert always.json()["detail"] == (
            f'"always allow" is turned off: locked by managed policy ({managed}: disable_allow_always)'
        )
        assert (await api.client.post(url, json={"decision": "allow_once"})).status_code == 200
        await api.host.runner.wait(session_id, timeout=30)
        assert (await api.client.get("/api/permissions")).json()["allow"] == []


async def test_the_auto_approve_switch_is_403_when_the_managed_policy_turns_it_off(tmp_path, pool, managed):
    async with serve_api(tmp_path, pool) as api:
        session_id = (await api.client.post("/api/sessions", json={})).json()["id"]
        response = await api.client.patch(f"/api/sessions/{session_id}", json={"auto_approve": True})
        assert response.status_code == 403
        assert f"({managed}: disable_auto_approve)" in response.json()["detail"]
        assert (await api.client.get(f"/api/sessions/{session_id}")).json()["auto_approve"] is None


async def test_a_server_off_the_allow_list_cannot_be_added_from_the_dashboard(tmp_path, pool, managed):
    async with serve_api(tmp_path, pool) as api:
        entry = {"command": sys.executable, "args": ["-c", "pass"]}
        response = await api.client.post("/api/servers", json={"name": "sneaky", "entry": entry})
        assert response.status_code == 403
        assert "'sneaky' is not in allowed_mcp_servers" in response.json()["detail"]
        assert all(s["name"] != "sneaky" for s in (await api.client.get("/api/servers")).json())


async def test_a_tool_the_managed_policy_asks_about_is_not_listed_as_running_unasked(tmp_path, pool, monkeypatch):
    path = tmp_path / "managed.yaml"
    path.write_text("permissions:\n  ask: [mcp__file__read_file]\n")
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(path))
    async with serve_api(tmp_path, pool) as api:
        session_id = (await api.client.post("/api/sessions", json={})).json()["id"]
        standing = (await api.client.get(f"/api/sessions/{session_id}/standing-rules")).json()
        assert "mcp__file__list_dir" in standing["tools"]
        assert "mcp__file__read_file" not in standing["tools"]
