"""`/api/schedules` through the ASGI app: CRUD, pause/resume, run now, validation, and roles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend.testing import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

IN_A_YEAR = (datetime.now(UTC) + timedelta(days=365)).strftime("%Y-%m-%dT09:00")


async def create(api, **body) -> dict:
    response = await api.client.post("/api/schedules", json={"prompt": "Check the build", "timezone": "UTC", **body})
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_schedule_is_created_listed_read_edited_and_deleted(api):
    job = await create(api, schedule="0 9 * * 1-5", name="Build check", mode="ask")
    assert (job["kind"], job["status"], job["name"], job["mode"], job["timezone"]) == (
        "cron", "active", "Build check", "ask", "UTC"
    )
    assert datetime.fromisoformat(job["next_run_at"]).hour == 9

    listed = (await api.client.get("/api/schedules")).json()
    assert [j["id"] for j in listed] == [job["id"]]
    assert (await api.client.get(f"/api/schedules/{job['id']}")).json() == job

    edited = await api.client.patch(f"/api/schedules/{job['id']}", json={"schedule": "every 2h", "name": "Often"})
    assert edited.status_code == 200
    assert (edited.json()["kind"], edited.json()["schedule"], edited.json()["name"]) == ("every", "every 2h", "Often")

    assert (await api.client.delete(f"/api/schedules/{job['id']}")).status_code == 204
    assert (await api.client.get(f"/api/schedules/{job['id']}")).status_code == 404
    assert (await api.client.delete(f"/api/schedules/{job['id']}")).status_code == 404


async def test_pause_and_resume_switch_the_status_and_the_next_run(api):
    job = await create(api, schedule="every 1h")
    paused = (await api.client.post(f"/api/schedules/{job['id']}/pause")).json()
    assert (paused["status"], paused["next_run_at"]) == ("paused", None)
    again = await api.client.post(f"/api/schedules/{job['id']}/pause")
    assert again.status_code == 200 and again.json()["status"] == "paused"
    resumed = (await api.client.post(f"/api/schedules/{job['id']}/resume")).json()
    assert resumed["status"] == "active" and resumed["next_run_at"] is not None


async def test_run_now_starts_a_cron_session_and_its_result_is_recorded(api):
    api.model.push(Reply(text="All green."))
    job = await create(api, schedule=IN_A_YEAR, name="Yearly")
    response = await api.client.post(f"/api/schedules/{job['id']}/run")
    assert response.status_code == 200
    ran = response.json()
    assert ran["outcome"] == "started" and ran["schedule"]["next_run_at"] == job["next_run_at"]
    session = await api.host.runner.wait(ran["session_id"], timeout=30)
    assert (session.origin, session.schedule_id, session.title) == ("cron", job["id"], "Yearly")
    await api.host.scheduler.drain()
    stored = (await api.client.get(f"/api/schedules/{job['id']}")).json()
    assert (stored["last_status"], stored["last_result"]) == ("completed", "All green.")


async def test_bad_input_is_a_4xx_that_names_the_problem(api):
    cases = [
        ({"schedule": "every 5 fortnights"}, 400, "unknown unit"),
        ({"schedule": "61 * * * *"}, 400, "out of range"),
        ({"schedule": "2001-01-01T00:00"}, 400, "in the past"),
        ({"schedule": "@daily", "timezone": "Mars/Olympus"}, 400, "unknown time zone"),
        ({"schedule": "@daily", "session_id": "nope"}, 400, "no session 'nope'"),
        ({"schedule": "@daily", "workspace": "/no/such/dir"}, 400, "not a directory"),
        ({"schedule": "@daily", "shedule": "typo"}, 422, "shedule"),
        ({"schedule": ""}, 422, "schedule"),
    ]
    for body, code, words in cases:
        response = await api.client.post("/api/schedules", json={"prompt": "p", **body})
        assert response.status_code == code, (body, response.text)
        assert words in response.json()["detail"], (body, response.json())
    assert (await api.client.get("/api/schedules")).json() == []


async def test_a_bad_edit_is_400_and_changes_nothing(api):
    job = await create(api, schedule="@daily")
    response = await api.client.patch(f"/api/schedules/{job['id']}", json={"schedule": "every 10 parsecs"})
    assert response.status_code == 400 and "unknown unit" in response.json()["detail"]
    assert (await api.client.get(f"/api/schedules/{job['id']}")).json() == job


async def test_unknown_schedules_are_404(api):
    for method, path in [
        ("get", "/api/schedules/missing"),
        ("patch", "/api/schedules/missing"),
        ("post", "/api/schedules/missing/pause"),
        ("post", "/api/schedules/missing/resume"),
        ("post", "/api/schedules/missing/run"),
    ]:
        response = await api.client.request(method, path, json={} if method == "patch" else None)
        assert response.status_code == 404, (method, path)


async def test_every_schedule_route_needs_credentials(api):
    routes = [
        ("get", "/api/schedules"),
        ("post", "/api/schedules"),
        ("get", "/api/schedules/x"),
        ("patch", "/api/schedules/x"),
        ("delete", "/api/schedules/x"),
        ("post", "/api/schedules/x/pause"),
        ("post", "/api/schedules/x/resume"),
        ("post", "/api/schedules/x/run"),
    ]
    for method, path in routes:
        response = await api.anonymous.request(method, path, json={})
        assert response.status_code == 401, (method, path)


async def test_a_viewer_can_read_schedules_but_not_change_them(api):
    job = await create(api, schedule="@daily")
    key = api.app.state.auth.create_api_key("watcher", role="viewer")
    as_viewer = {"Authorization": f"Bearer {key}"}
    assert (await api.anonymous.get("/api/schedules", headers=as_viewer)).status_code == 200
    for method, path, body in [
        ("post", "/api/schedules", {"schedule": "@daily", "prompt": "p"}),
        ("post", f"/api/schedules/{job['id']}/pause", None),
        ("delete", f"/api/schedules/{job['id']}", None),
    ]:
        response = await api.anonymous.request(method, path, json=body, headers=as_viewer)
        assert response.status_code == 403, (method, path)


async def test_a_workspace_the_os_will_not_look_up_is_a_400_not_a_500(api):
    # Found by schemathesis (issue 13): ENAMETOOLONG and an unknown `~user` raised in pathlib.
    for workspace in ("/" + "a" * 300, "~no-such-user-for-overseer/x"):
        response = await api.client.post("/api/schedules", json={"prompt": "p", "schedule": "@daily", "workspace": workspace})
        assert response.status_code == 400, (workspace, response.text)
        assert "not a directory" in response.json()["detail"]
