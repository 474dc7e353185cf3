"""GET /api/sessions/{id}/standing-rules (backend/app/standing.py): what runs without asking in
one session, from the rules and policies in force and the session's mode, never "nothing" when
something does."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_the_standing_rules_list_the_allow_rules_and_the_tools_that_run_unasked(api):
    api.host.policies.add_always_allow(["mcp__shell__exec(git status)"])
    session_id = (await api.client.post("/api/sessions", json={"title": "s"})).json()["id"]
    response = await api.client.get(f"/api/sessions/{session_id}/standing-rules")
    assert response.status_code == 200
    standing = response.json()
    assert [r["rule"] for r in standing["allow_rules"]] == ["mcp__shell__exec(git status)"]
    # The file server's readers are always_allow by default; writes and the shell ask.
    assert "mcp__file__read_file" in standing["tools"]
    assert "mcp__file__write_file" not in standing["tools"] and "mcp__shell__exec" not in standing["tools"]
    assert standing["mode"] == "agent" and standing["no_writes"] is False


async def test_a_policy_set_to_ask_leaves_the_list_and_a_mode_policy_comes_first(api):
    api.host.policies.set_policies({**api.host.policies.policies, "mcp__file__read_file": "ask"})
    session_id = (await api.client.post("/api/sessions", json={"title": "s"})).json()["id"]
    tools = (await api.client.get(f"/api/sessions/{session_id}/standing-rules")).json()["tools"]
    assert "mcp__file__read_file" not in tools and "mcp__file__list_dir" in tools
    plan = (await api.client.post("/api/sessions", json={"title": "p", "mode": "plan"})).json()["id"]
    planned = (await api.client.get(f"/api/sessions/{plan}/standing-rules")).json()
    assert planned["no_writes"] is True and "mcp__file__write_file" not in planned["tools"]


async def test_an_agent_limited_to_some_servers_lists_only_their_tools_and_rules(api):
    api.host.policies.add_always_allow(["mcp__shell__exec(git status)", "mcp__file__write_file(notes.txt)"])
    created = await api.client.post("/api/agents", json={"id": "filer", "servers": ["file"]})
    assert created.status_code == 201, created.text
    session_id = (await api.client.post("/api/sessions", json={"title": "s", "agent": "filer"})).json()["id"]
    standing = (await api.client.get(f"/api/sessions/{session_id}/standing-rules")).json()
    assert [r["rule"] for r in standing["allow_rules"]] == ["mcp__file__write_file(notes.txt)"]
    assert "mcp__file__read_file" in standing["tools"]
    assert all(name.startswith("mcp__file__") for name in standing["tools"]), standing["tools"]


async def test_standing_rules_of_no_such_session_are_404(api):
    assert (await api.client.get("/api/sessions/nope/standing-rules")).status_code == 404
