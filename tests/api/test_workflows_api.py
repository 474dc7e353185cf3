"""`/api/workflows` and `/api/workflow-runs` through the ASGI app: definitions, runs, gates, stop, auth."""

from __future__ import annotations

import pytest

from backend.domain.models import Approval
from backend.testing import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

PLAN = "## Plan\n1. Write hello.txt"


async def next_gate(api) -> Approval:
    events = api.host.bus.subscribe(None)
    try:
        while True:
            pending = [a for a in await api.host.broker.pending() if a.kind == "workflow_step"]
            if pending:
                return pending[0]
            await events.get(timeout=15)
    finally:
        api.host.bus.unsubscribe(events)


async def test_the_definitions_are_listed_and_read(api):
    listed = await api.client.get("/api/workflows")
    assert listed.status_code == 200
    assert {w["name"] for w in listed.json()} >= {"plan-then-build", "research-then-write"}
    one = (await api.client.get("/api/workflows/plan-then-build")).json()
    assert [(s["mode"], s["approve"]) for s in one["steps"]] == [("plan", True), ("agent", False)]
    assert one["source"] == "builtin"


async def test_a_run_is_started_read_listed_and_carried_through_its_gate(api):
    api.model.push(Reply(text=PLAN), Reply(text="Done."))
    started = await api.client.post("/api/workflows/plan-then-build/runs", json={"input": "Write hello.txt"})
    assert started.status_code == 201, started.text
    run = started.json()
    assert (run["workflow"], run["status"], run["input"]) == ("plan-then-build", "running", "Write hello.txt")
    assert run["steps"][0]["session_id"] and run["steps"][1]["session_id"] is None

    gate = await next_gate(api)
    read = (await api.client.get(f"/api/workflow-runs/{run['id']}")).json()
    assert read["status"] == "waiting_approval"
    # The gate is answered where every approval is: the approvals API, here with an edited prompt.
    answered = await api.client.post(
        f"/api/approvals/{gate.id}",
        json={"decision": "allow_once", "updated_arguments": {**gate.arguments, "prompt": "Write hello.txt only."}},
    )
    assert answered.status_code == 200, answered.text
    await api.host.workflows.wait(run["id"], timeout=30)

    done = (await api.client.get(f"/api/workflow-runs/{run['id']}")).json()
    assert done["status"] == "completed"
    assert [s["status"] for s in done["steps"]] == ["completed", "completed"]
    assert api.model.requests[-1].last_prompt() == "Write hello.txt only."
    listed = (await api.client.get("/api/workflow-runs", params={"workflow": "plan-then-build"})).json()
    assert [r["id"] for r in listed] == [run["id"]]
    assert (await api.client.get("/api/workflow-runs", params={"workflow": "research-then-write"})).json() == []


async def test_runs_are_listed_newest_first_and_limited(api):
    api.model.push(Reply(text="a"), Reply(text="b"))
    first = (await api.client.post("/api/workflows/plan-then-build/runs", json={"input": "one"})).json()
    second = (await api.client.post("/api/workflows/plan-then-build/runs", json={"input": "two"})).json()
    listed = (await api.client.get("/api/workflow-runs")).json()
    assert [r["id"] for r in listed] == [second["id"], first["id"]]
    assert [r["id"] for r in (await api.client.get("/api/workflow-runs?limit=1")).json()] == [second["id"]]
    for run in (first, second):
        await api.client.post(f"/api/workflow-runs/{run['id']}/stop")


async def test_stopping_a_run_ends_it_stopped(api):
    api.model.push(Reply(text=PLAN))
    run = (await api.client.post("/api/workflows/plan-then-build/runs", json={"input": "x"})).json()
    gate = await next_gate(api)
    stopped = await api.client.post(f"/api/workflow-runs/{run['id']}/stop")
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    assert (await api.client.get(f"/api/approvals/{gate.id}")).json()["status"] == "cancelled"


async def test_unknown_workflows_and_runs_are_404_and_a_bad_body_is_422(api):
    assert (await api.client.get("/api/workflows/nope")).status_code == 404
    missing = await api.client.post("/api/workflows/nope/runs", json={"input": "x"})
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
    assert (await api.client.get("/api/workflow-runs/nope")).status_code == 404
    assert (await api.client.post("/api/workflow-runs/nope/stop")).status_code == 404
    assert (await api.client.post("/api/workflows/plan-then-build/runs", json={"inptu": "x"})).status_code == 422
    assert (await api.client.get("/api/workflow-runs")).json() == []


async def test_a_broken_definition_is_a_400_naming_its_file(api):
    folder = api.host.data_dir / "workflows"
    folder.mkdir()
    (folder / "broken.yaml").write_text("name: broken\nsteps:\n  - mode: agent\n    prompt: '{{nope}}'\n")
    response = await api.client.post("/api/workflows/broken/runs", json={"input": "x"})
    assert response.status_code == 400
    assert str(folder / "broken.yaml") in response.json()["detail"]


async def test_every_workflow_route_needs_credentials(api):
    routes = [
        ("get", "/api/workflows"),
        ("get", "/api/workflows/plan-then-build"),
        ("post", "/api/workflows/plan-then-build/runs"),
        ("get", "/api/workflow-runs"),
        ("get", "/api/workflow-runs/x"),
        ("post", "/api/workflow-runs/x/stop"),
    ]
    for method, path in routes:
        response = await api.anonymous.request(method, path, json={"input": "x"} if method == "post" else None)
        assert response.status_code == 401, (method, path)
    assert await api.host.store.list_workflow_runs() == []


async def test_a_viewer_can_read_workflows_but_not_start_or_stop_runs(api):
    key = api.app.state.auth.create_api_key("watcher", role="viewer")
    as_viewer = {"Authorization": f"Bearer {key}"}
    assert (await api.anonymous.get("/api/workflows", headers=as_viewer)).status_code == 200
    assert (await api.anonymous.get("/api/workflow-runs", headers=as_viewer)).status_code == 200
    start = await api.anonymous.post("/api/workflows/plan-then-build/runs", json={"input": "x"}, headers=as_viewer)
    assert start.status_code == 403
    assert (await api.anonymous.post("/api/workflow-runs/x/stop", headers=as_viewer)).status_code == 403


async def test_deleting_the_session_a_gate_sits_on_ends_the_run_with_a_clear_reason(api):
    api.model.push(Reply(text=PLAN))
    run = (await api.client.post("/api/workflows/plan-then-build/runs", json={"input": "x"})).json()
    gate = await next_gate(api)
    assert (await api.client.delete(f"/api/sessions/{gate.session_id}")).status_code == 204
    ended = await api.host.workflows.wait(run["id"], timeout=30)
    assert ended.status in ("failed", "stopped", "denied")
    assert "deleted" in (ended.detail or "")
    assert await api.host.broker.pending() == []


async def test_a_workspace_the_os_will_not_look_up_is_a_400_not_a_500(api):
    # Found by schemathesis (issue 13): ENAMETOOLONG and an unknown `~user` raised in pathlib.
    for workspace in ("/" + "a" * 300, "~no-such-user-for-overseer/x"):
        response = await api.client.post(
            "/api/workflows/plan-then-build/runs", json={"input": "x", "workspace": workspace}
        )
        assert response.status_code == 400, (workspace, response.text)
        assert "not a directory" in response.json()["detail"]
