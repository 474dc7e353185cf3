"""PATCH /api/sessions/{id} (rename, archive, auto-approve) and GET /api/sessions?archived=&q=."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.testing import Reply, ScriptedToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


def key(api, name: str, role: str = "approver") -> dict[str, str]:
    return {"X-API-Key": api.app.state.auth.create_api_key(name, role=role)}


async def idle_session(api, headers: dict[str, str] | None = None, title: str = "first title") -> str:
    client = api.anonymous if headers else api.client
    response = await client.post("/api/sessions", json={"title": title}, headers=headers or {})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_the_owner_renames_and_archives_and_the_change_is_announced(api):
    alice = key(api, "alice")
    session_id = await idle_session(api, alice)
    assert (await api.client.get(f"/api/sessions/{session_id}")).json()["created_by"]["name"] == "alice"
    sub = api.host.bus.subscribe(session_id)
    try:
        renamed = await api.anonymous.patch(f"/api/sessions/{session_id}", json={"title": "  Fix\nthe login  "}, headers=alice)
        assert renamed.status_code == 200 and renamed.json()["title"] == "Fix the login"
        event = await sub.get(timeout=5)
        assert (event.type, event.data["title"]) == ("session.updated", "Fix the login")
        archived = await api.anonymous.patch(f"/api/sessions/{session_id}", json={"archived": True}, headers=alice)
        assert archived.json()["archived"] is True
        event = await sub.get(timeout=5)
        assert (event.type, event.data["archived"]) == ("session.updated", True)
    finally:
        api.host.bus.unsubscribe(sub)
    stored = await api.host.store.get_session(session_id)
    assert (stored.title, stored.archived) == ("Fix the login", True)


async def test_another_approver_and_a_viewer_may_not_change_it_but_an_admin_may(api):
    session_id = await idle_session(api, key(api, "owner1"))
    for headers in (key(api, "mallory"), key(api, "vera", role="viewer")):
        refused = await api.anonymous.patch(f"/api/sessions/{session_id}", json={"title": "mine"}, headers=headers)
        assert refused.status_code == 403 and "owner1" in refused.json()["detail"]
    assert (await api.host.store.get_session(session_id)).title == "first title"
    by_admin = await api.client.patch(f"/api/sessions/{session_id}", json={"title": "admin's"})
    assert by_admin.status_code == 200 and by_admin.json()["title"] == "admin's"


async def test_a_session_without_an_owner_is_changed_by_admins_only(api):
    # Started by Overseer: nobody's.
    session = await api.host.runner.create(options=SessionOptions(title="cron job"))
    refused = await api.anonymous.patch(f"/api/sessions/{session.id}", json={"archived": True}, headers=key(api, "amy"))
    assert refused.status_code == 403
    assert (await api.client.patch(f"/api/sessions/{session.id}", json={"archived": True})).status_code == 200


@pytest.mark.parametrize(
    "body, words",
    [
        ({}, "nothing to change"),
        ({"title": "   "}, "empty"),
        ({"title": "x" * 201}, "at most 200"),
        ({"title": "a\x07b"}, "control"),
        ({"approve_pending": True}, "approve_pending"),
        ({"auto_approve": False, "approve_pending": True}, "approve_pending"),
        ({"auto_approve_scope": "workspace_edits"}, "auto_approve_scope"),
        ({"auto_approve": False, "auto_approve_high_risk": True}, "auto_approve_high_risk"),
        ({"auto_approve": True, "auto_approve_scope": "everything"}, "auto_approve_scope"),
        ({"archived": "maybe"}, "archived"),
        ({"colour": "red"}, "colour"),
    ],
)
async def test_bad_edits_are_422_naming_the_problem_and_change_nothing(api, body, words):
    session_id = await idle_session(api)
    response = await api.client.patch(f"/api/sessions/{session_id}", json=body)
    assert response.status_code == 422 and words in response.json()["detail"], response.text
    stored = await api.host.store.get_session(session_id)
    assert (stored.title, stored.archived, stored.auto_approve) == ("first title", False, None)


async def test_an_unknown_session_is_404(api):
    assert (await api.client.patch("/api/sessions/nope", json={"title": "x"})).status_code == 404


async def test_an_active_session_cannot_be_archived_until_it_stops(api):
    api.model.push(Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "a", "content": "x"})]))
    sub = api.host.bus.subscribe(None)  # before the session starts: its approval cannot be missed
    try:
        session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
        while not ((event := await sub.get(timeout=30)).type == "approval.requested" and event.session_id == session_id):
            pass
    finally:
        api.host.bus.unsubscribe(sub)
    busy = await api.client.patch(f"/api/sessions/{session_id}", json={"archived": True, "title": "renamed"})
    assert busy.status_code == 409 and "stop it or let it finish" in busy.json()["detail"]
    assert (await api.host.store.get_session(session_id)).title != "renamed"  # all or nothing
    await api.client.post(f"/api/sessions/{session_id}/stop")
    archived = await api.client.patch(f"/api/sessions/{session_id}", json={"archived": True})
    assert archived.status_code == 200 and archived.json()["archived"] is True


async def test_auto_approve_records_who_turned_it_on_and_turns_off(api):
    alice = key(api, "alice2")
    session_id = await idle_session(api, alice)
    on = (await api.anonymous.patch(f"/api/sessions/{session_id}", json={"auto_approve": True}, headers=alice)).json()
    assert on["auto_approve"]["by"] == {"name": "alice2", "kind": "api_key", "role": "approver", "via": "rest"}
    off = await api.client.patch(f"/api/sessions/{session_id}", json={"auto_approve": False})
    assert off.json()["auto_approve"] is None
    refused = await api.anonymous.patch(f"/api/sessions/{session_id}", json={"auto_approve": True}, headers=key(api, "eve"))
    assert refused.status_code == 403


async def test_auto_approve_keeps_its_scope_and_high_risk_choice_and_defaults_to_commands_without_high_risk(api):
    session_id = await idle_session(api)
    plain = (await api.client.patch(f"/api/sessions/{session_id}", json={"auto_approve": True})).json()
    assert (plain["auto_approve"]["scope"], plain["auto_approve"]["high_risk"]) == ("edits_and_commands", False)
    body = {"auto_approve": True, "auto_approve_scope": "workspace_edits", "auto_approve_high_risk": True}
    chosen = (await api.client.patch(f"/api/sessions/{session_id}", json=body)).json()
    assert (chosen["auto_approve"]["scope"], chosen["auto_approve"]["high_risk"]) == ("workspace_edits", True)
    stored = (await api.host.store.get_session(session_id)).auto_approve
    assert stored is not None and (stored.scope, stored.high_risk) == ("workspace_edits", True)


async def test_the_list_hides_archived_sessions_when_asked_and_searches_titles_and_messages(api):
    api.model.push(Reply(text="the answer mentions zebra_99%"))
    said = (await api.client.post("/api/sessions", json={"prompt": "tell me about quokkas"})).json()["id"]
    await api.host.runner.wait(said, timeout=30)
    titled = await idle_session(api, title="Quokka census")
    await api.client.patch(f"/api/sessions/{titled}", json={"archived": True})

    async def listed(**params) -> set[str]:
        response = await api.client.get("/api/sessions", params=params)
        assert response.status_code == 200, response.text
        return {s["id"] for s in response.json()} & {said, titled}

    assert await listed(q="QUOKKA") == {said, titled}
    assert await listed(q="quokka", archived="false") == {said}
    assert await listed(q="quokka", archived="true") == {titled}
    assert await listed(q="zebra_99%") == {said}
    assert await listed(q="zebra%99") == set()
    assert await listed(archived="false") == {said}
    for bad in ("x" * 201, "a\x00b"):
        assert (await api.client.get("/api/sessions", params={"q": bad})).status_code == 422


async def test_an_approver_cannot_delete_another_users_session_and_the_owner_who_does_is_named(api):
    owner = key(api, "dora")
    api.model.push(Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "d", "content": "x"})]))
    sub = api.host.bus.subscribe(None)  # before the session starts: its approval cannot be missed
    try:
        created = await api.anonymous.post("/api/sessions", json={"prompt": "write"}, headers=owner)
        session_id = created.json()["id"]
        while not ((event := await sub.get(timeout=30)).type == "approval.requested" and event.session_id == session_id):
            pass
    finally:
        api.host.bus.unsubscribe(sub)
    approval_id = event.data["id"]
    refused = await api.anonymous.delete(f"/api/sessions/{session_id}", headers=key(api, "mallory2"))
    assert refused.status_code == 403 and "dora" in refused.json()["detail"], refused.text
    assert (await api.anonymous.delete(f"/api/sessions/{session_id}", headers=key(api, "vic", role="viewer"))).status_code == 403
    assert (await api.host.store.get_approval(approval_id)).status == "pending"  # nothing withdrawn
    sub = api.host.bus.subscribe(session_id)
    try:
        assert (await api.anonymous.delete(f"/api/sessions/{session_id}", headers=owner)).status_code == 204
        while (resolved := await sub.get(timeout=30)).type != "approval.resolved":
            pass
    finally:
        api.host.bus.unsubscribe(sub)
    assert resolved.data["id"] == approval_id and resolved.data["status"] == "cancelled"
    assert (resolved.data["decider"]["name"], resolved.data["decider"]["via"]) == ("dora", "rest")
    audit = await api.host.store.list_audit(session_id=session_id)
    assert audit and all(e.decider.name == "dora" for e in audit), audit
