"""POST /api/sessions/{id}/tool-calls/{call}/retry (backend/api/routes/session_steps.py): a denied
step asked again over REST; 404 for no such call, 409 for a call no person refused."""

from __future__ import annotations

import pytest

from backend.testing import Reply, ScriptedToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")


def write(id: str) -> Reply:
    call = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "x"}, id=id)
    return Reply(tool_calls=[call])


async def pending(api, session_id: str) -> dict:
    """The session's pending approval, waiting (bounded) for one to be requested."""
    sub = api.host.bus.subscribe(session_id)
    try:
        found = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        while not [a for a in found if a["session_id"] == session_id]:
            if (await sub.get(timeout=15)).type == "approval.requested":
                found = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        return [a for a in found if a["session_id"] == session_id][0]
    finally:
        api.host.bus.unsubscribe(sub)


async def test_a_denied_step_is_retried_over_rest_and_asks_again(api):
    api.model.push(write("r1"), Reply(text="denied"), Reply(text="written"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    first = await pending(api, session_id)
    await api.client.post(f"/api/approvals/{first['id']}", json={"decision": "deny"})
    done = await api.host.runner.wait(session_id, timeout=30)
    assert done.stop_reason == "denied"
    assert (await api.client.get(f"/api/sessions/{session_id}")).json()["stop_reason"] == "denied"

    refused = await api.client.get(f"/api/sessions/{session_id}/refused-calls")
    assert refused.json() == {"r1": "denied"}
    retried = await api.client.post(f"/api/sessions/{session_id}/tool-calls/r1/retry")
    assert retried.status_code == 202 and retried.json()["stop_reason"] is None
    second = await pending(api, session_id)
    assert second["arguments"] == first["arguments"] and second["id"] != first["id"]
    await api.client.post(f"/api/approvals/{second['id']}", json={"decision": "allow_once"})
    done = await api.host.runner.wait(session_id, timeout=30)
    assert (done.status, done.stop_reason) == ("completed", None)
    assert (api.host.settings.resolved_workspace / "notes.txt").read_text() == "x"
    ran = await api.client.post(f"/api/sessions/{session_id}/tool-calls/{second['tool_call_id']}/retry")
    assert ran.status_code == 409


async def test_retrying_an_unknown_call_is_404_and_a_call_that_ran_is_409(api):
    api.model.push(Reply(text="hi"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
    await api.host.runner.wait(session_id, timeout=30)
    assert (await api.client.post(f"/api/sessions/{session_id}/tool-calls/nope/retry")).status_code == 404
    assert (await api.client.post("/api/sessions/nope/tool-calls/nope/retry")).status_code == 404
    assert (await api.client.get(f"/api/sessions/{session_id}/refused-calls")).json() == {}
    assert (await api.client.get("/api/sessions/nope/refused-calls")).status_code == 404
