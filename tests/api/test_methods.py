"""405s that name every method of a path, and API paths that never fall through to the dashboard."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


async def test_a_get_on_a_post_only_api_route_is_a_405_allowing_post(api):
    response = await api.client.get("/api/sessions/some-id/stop")
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "POST"


async def test_a_405_allows_every_method_of_the_path_not_one_route_s(api):
    response = await api.client.delete("/api/sessions")
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == {"GET", "POST"}
    one = await api.client.put("/api/sessions/some-id")
    assert one.status_code == 405
    assert set(one.headers["allow"].split(", ")) == {"DELETE", "GET", "PATCH"}
    assert one.json()["detail"] == f"PUT is not allowed on /api/sessions/some-id; it takes {one.headers['allow']}"


async def test_an_api_path_no_route_takes_is_still_a_404(api):
    response = await api.client.get("/api/no-such-thing")
    assert response.status_code == 404 and response.json()["detail"] == "no route /api/no-such-thing"

