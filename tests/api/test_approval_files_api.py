"""The file a pending write would change, for the approval card's diff (issue 16): read only inside
the session's workspace, only while the request waits, only by those who answer approvals."""

from __future__ import annotations

import pytest

from backend.testing import Reply, ScriptedToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")


def write(path: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "new\n"})])


async def pending(api, path: str) -> str:
    """Start a session whose model writes `path`; the id of the approval it waits on."""
    api.model.push(write(path), Reply(text="done"))
    events = api.host.bus.subscribe(None)
    try:
        await api.client.post("/api/sessions", json={"prompt": "write"})
        while (event := await events.get(timeout=15)).type != "approval.requested":
            pass
        return event.data["id"]
    finally:
        api.host.bus.unsubscribe(events)


async def test_the_file_on_disk_is_returned_while_the_write_waits(api):
    (api.host.settings.resolved_workspace / "notes.txt").write_text("old\n")
    approval_id = await pending(api, "notes.txt")
    response = await api.client.get(f"/api/approvals/{approval_id}/file")
    assert response.json() == {"path": "notes.txt", "exists": True, "content": "old\n", "note": None}

    await api.client.post(f"/api/approvals/{approval_id}", json={"decision": "allow_once"})
    assert (await api.client.get(f"/api/approvals/{approval_id}/file")).status_code == 409


async def test_a_missing_file_is_reported_as_new(api):
    approval_id = await pending(api, "fresh.txt")
    assert (await api.client.get(f"/api/approvals/{approval_id}/file")).json()["exists"] is False


async def test_a_path_outside_the_workspace_is_refused(api):
    secret = api.host.settings.resolved_workspace.parent / "secret.txt"
    secret.write_text("do not show")
    approval_id = await pending(api, "../secret.txt")
    response = await api.client.get(f"/api/approvals/{approval_id}/file")
    assert response.status_code == 400 and "do not show" not in response.text


async def test_a_viewer_cannot_read_the_file(api):
    approval_id = await pending(api, "notes.txt")
    key = api.app.state.auth.create_api_key("watcher", role="viewer")
    response = await api.anonymous.get(f"/api/approvals/{approval_id}/file", headers={"X-API-Key": key})
    assert response.status_code == 403
