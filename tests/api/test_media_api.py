"""Serving the images and audio of tool results: only to a signed-in caller, only the session's own,
as the type their name says and never as something a browser would run."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions

pytestmark = pytest.mark.asyncio(loop_scope="module")

PNG = b"\x89PNG\r\n\x1a\n not really"


async def test_a_tool_results_image_is_served_with_its_type_to_a_signed_in_caller(api):
    session = await api.host.runner.create(options=SessionOptions(title="shots"))
    saved = api.host.media.save(session.id, "image", "image/png", PNG)
    response = await api.client.get(f"/api/sessions/{session.id}/media/{saved.name}")
    assert response.status_code == 200
    assert response.content == PNG
    assert response.headers["content-type"] == "image/png"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in response.headers["content-security-policy"]
    anonymous = await api.anonymous.get(f"/api/sessions/{session.id}/media/{saved.name}")
    assert anonymous.status_code == 401


async def test_media_of_another_session_or_a_made_up_name_is_not_found(api):
    mine = await api.host.runner.create(options=SessionOptions(title="mine"))
    theirs = await api.host.runner.create(options=SessionOptions(title="theirs"))
    saved = api.host.media.save(theirs.id, "audio", "audio/wav", b"RIFF....WAVE")
    for name in (saved.name, "../" + theirs.id + "/" + saved.name, "x.png", "%2e%2e%2fsecret"):
        response = await api.client.get(f"/api/sessions/{mine.id}/media/{name}")
        assert response.status_code == 404, name
        assert isinstance(response.json()["detail"], str)
    missing = await api.client.get(f"/api/sessions/nosuchsession/media/{saved.name}")
    assert missing.status_code == 404
