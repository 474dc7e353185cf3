"""GET /api/settings/checkpoints (backend/api/routes/settings.py): the disk checkpoints take, in all
and per workspace, with their retention, for Settings (issue 32); an admin's only."""

from __future__ import annotations

import os

import pytest

from backend.domain.session_options import SessionOptions

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


async def test_an_admin_sees_the_disk_each_workspaces_checkpoints_take(api):
    empty = (await api.client.get("/api/settings/checkpoints")).json()
    assert empty["enabled"] is True and empty["workspaces"] == []
    assert (empty["keep_last"], empty["keep_days"]) == (100, 30)
    assert empty["dir"] == str(api.host.settings.checkpoints_dir)

    workspace = api.host.settings.resolved_workspace
    (workspace / "notes.txt").write_text("kept\n")
    session = await api.host.runner.create(options=SessionOptions(title="usage"))
    taken = await api.host.checkpointer.before_step(
        session_id=session.id, workspace=workspace, call_id="c1", tool_name="mcp__file__write_file", annotations=None
    )
    assert taken is not None

    usage = (await api.client.get("/api/settings/checkpoints")).json()
    (only,) = usage["workspaces"]
    assert only["workspace"] == os.path.realpath(workspace) and only["checkpoints"] == 1
    assert 0 < only["bytes"] <= usage["bytes"]


async def test_an_approver_may_not_see_where_checkpoints_are_kept(api):
    headers = {"X-API-Key": api.app.state.auth.create_api_key("approver", role="approver")}
    response = await api.anonymous.get("/api/settings/checkpoints", headers=headers)
    assert response.status_code == 403
