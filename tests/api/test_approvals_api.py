"""POST /api/approvals/{id} (backend/api/routes/approvals.py): an answer is safe to send again.

Issue 31, item 12: an answer whose response was lost to a dropped connection is retried by the
dashboard, channels and the bench; the retry must not read as someone else's answer (409).
"""

from __future__ import annotations

import pytest

from backend.testing import Reply, ScriptedToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")


def append(line: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": f"echo {line} >> runs.txt"})])


async def _pending(api) -> dict:
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


async def test_the_same_answer_posted_again_answers_200_with_the_approval_as_decided_and_the_tool_runs_once(api):
    api.model.push(append("ran"), Reply(text="done"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "run"})).json()["id"]
    approval = await _pending(api)
    body = {"decision": "allow_once", "message": "fine"}
    first = await api.client.post(f"/api/approvals/{approval['id']}", json=body)
    again = await api.client.post(f"/api/approvals/{approval['id']}", json=body)
    await api.host.runner.wait(session_id, timeout=30)
    assert first.status_code == 200 and again.status_code == 200, again.text
    assert again.json() == first.json() and again.json()["status"] == "allowed"
    assert (api.host.settings.resolved_workspace / "runs.txt").read_text() == "ran\n"


async def test_a_different_answer_posted_after_it_gets_409_saying_who_decided_what(api):
    api.model.push(append("denied"), Reply(text="done"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "run"})).json()["id"]
    approval = await _pending(api)
    first = await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "deny", "message": "no"})
    other = await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "allow_once"})
    await api.host.runner.wait(session_id, timeout=30)
    assert first.status_code == 200
    assert other.status_code == 409
    assert other.json()["detail"] == (
        f"approval {approval['id']} is already denied: admin (token, via rest) answered deny (no)"
    )
    assert not (api.host.settings.resolved_workspace / "runs.txt").exists()
