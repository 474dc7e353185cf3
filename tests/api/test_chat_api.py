"""Sessions and messages through the API with the issue-5 extras: instructions, modes, commands, images."""

from __future__ import annotations

import base64

import pytest

from backend.testing import Reply

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8).decode()


async def test_a_session_s_instructions_end_its_system_prompt(api) -> None:
    api.model.push(Reply(text="bonjour"))
    created = await api.client.post(
        "/api/sessions", json={"prompt": "hello", "mode": "ask", "instructions": "Answer in French."}
    )
    assert created.status_code == 201, created.text
    await api.host.runner.wait(created.json()["id"], timeout=30)
    system = api.model.requests[0].system or ""
    assert system.endswith("Answer in French.") and "Mode: ask" in system


async def test_an_unknown_mode_is_a_400_naming_the_modes_and_creates_nothing(api) -> None:
    response = await api.client.post("/api/sessions", json={"prompt": "hi", "mode": "nope"})
    assert response.status_code == 400
    assert "unknown mode 'nope'" in response.json()["detail"] and "plan" in response.json()["detail"]
    assert (await api.client.get("/api/sessions")).json() == []


async def test_a_refused_first_message_leaves_no_empty_session_behind(api) -> None:
    response = await api.client.post("/api/sessions", json={"prompt": "/nosuchskill do it"})
    assert response.status_code == 400 and "/nosuchskill is not a command or a skill" in response.json()["detail"]
    assert (await api.client.get("/api/sessions")).json() == []


async def test_a_command_returns_its_detail_instead_of_a_message_index(api) -> None:
    session = (await api.client.post("/api/sessions", json={"title": "t"})).json()
    response = await api.client.post(f"/api/sessions/{session['id']}/messages", json={"content": "/mode plan"})
    assert response.status_code == 202
    body = response.json()
    assert body["idx"] is None and body["command"] == "mode" and "plan" in body["detail"]
    assert (await api.client.get(f"/api/sessions/{session['id']}")).json()["mode"] == "plan"


async def test_an_image_is_stored_with_the_message_and_a_bad_one_is_a_400(api) -> None:
    api.model.push(Reply(text="a dot"))
    session = (await api.client.post("/api/sessions", json={"title": "t"})).json()
    url = f"/api/sessions/{session['id']}/messages"
    bad = await api.client.post(url, json={"content": "x", "images": [{"data": PNG, "mime_type": "image/tiff"}]})
    assert bad.status_code == 400 and "image/tiff" in bad.json()["detail"]
    good = await api.client.post(url, json={"content": "what is it?", "images": [{"data": PNG, "mime_type": "image/png"}]})
    assert good.status_code == 202
    await api.host.runner.wait(session["id"], timeout=30)
    detail = (await api.client.get(f"/api/sessions/{session['id']}")).json()
    [user] = [m for m in detail["messages"] if m["role"] == "user"]
    assert user["attachments"][0]["kind"] == "image" and user["attachments"][0]["mime_type"] == "image/png"


async def test_session_events_can_be_filtered_by_type(api) -> None:
    session = (await api.client.post("/api/sessions", json={"title": "t"})).json()
    await api.client.post(f"/api/sessions/{session['id']}/messages", json={"content": "/help"})
    everything = (await api.client.get(f"/api/sessions/{session['id']}/events")).json()
    notices = (await api.client.get(f"/api/sessions/{session['id']}/events?types=notice,session.mode")).json()
    assert {e["type"] for e in everything} > {"notice"}
    assert [e["type"] for e in notices] == ["notice"]


async def test_a_context_path_no_file_can_have_is_a_400_not_a_500(api) -> None:
    # Found by schemathesis (issue 13): a NUL byte (ValueError) or a 300-byte name (ENAMETOOLONG)
    # escaped path resolution as a 500.
    session = (await api.client.post("/api/sessions", json={"title": "t"})).json()
    for path in ("notes\x00.txt", "a" * 300):
        response = await api.client.post(
            f"/api/sessions/{session['id']}/messages", json={"content": "read it", "context_paths": [path]}
        )
        assert response.status_code == 400, (path, response.text)
        assert "not a usable path" in response.json()["detail"]


async def test_an_unknown_skill_in_a_message_is_a_400_that_names_the_skill_not_a_404(api) -> None:
    created = await api.client.post("/api/sessions", json={})
    session_id = created.json()["id"]
    response = await api.client.post(
        f"/api/sessions/{session_id}/messages", json={"content": "hi", "attached_skills": ["no-such-skill"]}
    )
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith("unknown skill 'no-such-skill'")
    first = await api.client.post("/api/sessions", json={"prompt": "hi", "attached_skills": ["no-such-skill"]})
    assert first.status_code == 400 and "unknown skill 'no-such-skill'" in first.json()["detail"]
