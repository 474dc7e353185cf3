"""`/api/modes` through the ASGI app: list, read, save, delete and reset, errors and roles."""

from __future__ import annotations

import pytest

from backend.modes.registry import BUILTIN_ORDER

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

TRIAGE = {
    "description": "Sorts issues",
    "tools": ["mcp__github", "read-only"],
    "policies": {"mcp__github__close_issue": "deny"},
    "default_folder": "~/work",
    "next_mode": "agent",
    "icon": "🧭",
    "prompt": "Sort the issues by severity.",
}


async def test_modes_are_listed_built_ins_first(api):
    response = await api.client.get("/api/modes")
    assert response.status_code == 200
    assert [mode["name"] for mode in response.json()] == list(BUILTIN_ORDER)
    plan = (await api.client.get("/api/modes/plan")).json()
    assert (plan["source"], plan["next_mode"], plan["tools"]) == ("builtin", "agent", ["read-only"])


async def test_a_person_s_mode_is_created_read_replaced_and_deleted(api):
    created = await api.client.put("/api/modes/triage", json=TRIAGE)
    assert created.status_code == 200, created.text
    assert created.json() == {
        **TRIAGE, "name": "triage", "source": "user", "overrides_builtin": False, "sampling": "ask"
    }
    assert (api.host.data_dir / "modes" / "triage.md").is_file()
    assert (await api.client.get("/api/modes/triage")).json() == created.json()
    assert [m["name"] for m in (await api.client.get("/api/modes")).json()] == [*BUILTIN_ORDER, "triage"]

    replaced = await api.client.put("/api/modes/triage", json={"prompt": "Shorter."})
    assert (replaced.json()["tools"], replaced.json()["prompt"]) == ("all", "Shorter.")

    removed = await api.client.delete("/api/modes/triage")
    assert removed.status_code == 200
    assert removed.json() == {"removed": "user", "mode": None}
    gone = await api.client.get("/api/modes/triage")
    assert gone.status_code == 404 and "triage" in gone.json()["detail"]


async def test_overriding_a_built_in_then_deleting_it_resets_the_built_in(api):
    shipped = (await api.client.get("/api/modes/ask")).json()
    mine = (await api.client.put("/api/modes/ask", json={"prompt": "Answer in French."})).json()
    assert (mine["source"], mine["overrides_builtin"]) == ("user", True)
    assert (await api.client.get("/api/modes/ask/builtin")).json() == shipped

    reset = await api.client.delete("/api/modes/ask")
    assert reset.json() == {"removed": "override", "mode": shipped}
    assert (await api.client.get("/api/modes/ask")).json() == shipped


async def test_a_hand_edited_mode_file_shows_without_a_restart(api):
    folder = api.host.data_dir / "modes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.md").write_text("---\ndescription: Takes notes\n---\nTake notes.\n", encoding="utf-8")
    mode = (await api.client.get("/api/modes/notes")).json()
    assert (mode["description"], mode["prompt"], mode["source"]) == ("Takes notes", "Take notes.", "user")


async def test_deleting_a_built_in_without_an_override_is_a_400_with_a_detail(api):
    response = await api.client.delete("/api/modes/plan")
    assert response.status_code == 400
    assert "plan" in response.json()["detail"]
    assert (await api.client.get("/api/modes/plan")).status_code == 200


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("Triage", {}, "name"),
        ("triage", {"tools": ["nope"]}, "tools"),
        ("triage", {"policies": {"shell": "deny"}}, "policies"),
        ("triage", {"next_mode": "nowhere"}, "next_mode"),
    ],
)
async def test_an_invalid_name_or_field_is_a_400_naming_it(api, name, body, field):
    response = await api.client.put(f"/api/modes/{name}", json=body)
    assert response.status_code == 400, response.text
    assert field in response.json()["detail"]
    assert not (api.host.data_dir / "modes" / f"{name}.md").exists()


async def test_a_field_a_person_does_not_set_is_refused(api):
    response = await api.client.put("/api/modes/triage", json={"source": "builtin"})
    assert response.status_code == 422 and "source" in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/api/modes/nope"), ("delete", "/api/modes/nope"), ("get", "/api/modes/nope/builtin")],
)
async def test_an_unknown_mode_is_a_404_with_a_detail(api, method, path):
    response = await api.client.request(method, path)
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]


async def test_a_person_s_own_mode_has_no_built_in_version(api):
    await api.client.put("/api/modes/triage", json={"prompt": "p"})
    assert (await api.client.get("/api/modes/triage/builtin")).status_code == 404


async def test_modes_need_authentication(api):
    for method, path in [
        ("get", "/api/modes"),
        ("get", "/api/modes/plan"),
        ("put", "/api/modes/triage"),
        ("delete", "/api/modes/triage"),
        ("get", "/api/modes/plan/builtin"),
    ]:
        response = await api.anonymous.request(method, path, json={} if method == "put" else None)
        assert response.status_code == 401, (method, path)


async def test_a_viewer_can_read_modes_but_not_change_them(api):
    key = api.app.state.auth.create_api_key("watcher", role="viewer")
    as_viewer = {"Authorization": f"Bearer {key}"}
    assert (await api.anonymous.get("/api/modes", headers=as_viewer)).status_code == 200
    put = await api.anonymous.put("/api/modes/triage", json={"prompt": "p"}, headers=as_viewer)
    assert put.status_code == 403
    assert (await api.anonymous.delete("/api/modes/plan", headers=as_viewer)).status_code == 403


async def test_a_null_description_or_prompt_is_a_422_as_the_document_says(api):
    # Found by schemathesis (issue 13): the document says string, and `null` was saved as "".
    for field in ("description", "prompt"):
        response = await api.client.put("/api/modes/triage", json={**TRIAGE, field: None})
        assert response.status_code == 422, (field, response.text)
        assert field in response.json()["detail"]
    assert (await api.client.get("/api/modes/triage")).status_code == 404
