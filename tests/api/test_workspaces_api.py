"""Workspaces through the API (issue 31, item 1): POST /api/sessions, workflows and GET /api/workspaces."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


def key(api, name: str, role: str = "approver") -> dict[str, str]:
    return {"X-API-Key": api.app.state.auth.create_api_key(name, role=role)}


async def test_an_approver_cannot_make_the_data_dir_a_workspace_to_attach_the_admin_token(api):
    data_dir = api.host.data_dir.resolve()
    assert (data_dir / "token").is_file()
    body = {"workspace": str(data_dir), "context_paths": ["token", "jwt_secret"], "prompt": "read these"}
    before = {s.id for s in await api.host.store.list_sessions()}
    for headers in (key(api, "ann"), {"Authorization": api.client.headers["Authorization"]}):
        refused = await api.anonymous.post("/api/sessions", json=body, headers=headers)
        assert refused.status_code == 403, refused.text
        assert "is the data dir" in refused.json()["detail"]
    holder = await api.client.post("/api/sessions", json={**body, "workspace": str(data_dir.parent)})
    assert holder.status_code == 403 and "holds the data dir" in holder.json()["detail"]
    assert {s.id for s in await api.host.store.list_sessions()} == before  # no session was made


async def test_a_link_into_the_data_dir_is_refused_as_a_workspace_and_as_a_context_path(api):
    workspace = api.host.runner.default_workspace
    (workspace / "data-link").symlink_to(api.host.data_dir)
    linked = await api.client.post("/api/sessions", json={"workspace": str(workspace / "data-link")})
    assert linked.status_code == 403 and "is the data dir" in linked.json()["detail"]
    context = await api.client.post(
        "/api/sessions", json={"prompt": "x", "context_paths": ["data-link/token"]}
    )
    assert context.status_code == 400 and "outside the workspace" in context.json()["detail"], context.text


async def test_a_folder_under_no_allowed_root_is_refused_even_for_an_admin(api, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    refused = await api.client.post("/api/sessions", json={"workspace": str(elsewhere)})
    assert refused.status_code == 403 and "workspace_roots" in refused.json()["detail"]


async def test_an_approver_chooses_a_listed_workspace_and_an_admin_may_name_a_folder_under_one(api):
    listed = await api.anonymous.get("/api/workspaces", headers=key(api, "val", role="viewer"))
    assert listed.status_code == 200
    default = str(api.host.runner.default_workspace.resolve())
    assert listed.json() == [{"path": default, "default": True}]
    sub = api.host.runner.default_workspace / "sub"
    sub.mkdir(exist_ok=True)
    approver = key(api, "bea")
    typed = await api.anonymous.post("/api/sessions", json={"workspace": str(sub)}, headers=approver)
    assert typed.status_code == 403 and "not one of the allowed workspaces" in typed.json()["detail"]
    chosen = await api.anonymous.post("/api/sessions", json={"workspace": default}, headers=approver)
    assert chosen.status_code == 201 and chosen.json()["workspace"] == default
    by_admin = await api.client.post("/api/sessions", json={"workspace": str(sub)})
    assert by_admin.status_code == 201 and by_admin.json()["workspace"] == str(sub.resolve())


async def test_an_approver_cannot_start_a_workflow_in_the_data_dir(api):
    workflows = await api.client.get("/api/workflows")
    name = workflows.json()[0]["name"]
    refused = await api.anonymous.post(
        f"/api/workflows/{name}/runs", json={"input": "x", "workspace": str(api.host.data_dir)}, headers=key(api, "wes")
    )
    assert refused.status_code == 403 and "data dir" in refused.json()["detail"], refused.text


async def test_a_cron_job_in_the_data_dir_is_refused_when_it_is_saved(api):
    body = {"prompt": "p", "schedule": "@daily", "workspace": str(api.host.data_dir)}
    refused = await api.client.post("/api/schedules", json=body)
    assert refused.status_code == 403 and "is the data dir" in refused.json()["detail"], refused.text
