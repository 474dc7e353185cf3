"""Cookie-authenticated writes from another origin are refused; logout signs the JWT out (issue 31, item 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from backend.api.origin_check import from_this_site
from starlette.requests import Request

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


@asynccontextmanager
async def browser(api) -> AsyncIterator[httpx.AsyncClient]:
    """A client that logs in as a browser does and is then authenticated by its cookie alone."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api.app), base_url="http://test") as client:
        login = await client.post(
            "/api/auth/login", json={"username": "admin", "password": api.app.state.auth.token},
            headers={"Origin": "http://test"},
        )
        assert login.status_code == 200 and "overseer_session" in client.cookies
        yield client


async def a_session(api) -> str:
    return (await api.client.post("/api/sessions", json={})).json()["id"]


async def test_a_body_less_cookie_post_from_a_foreign_origin_is_403_and_stops_nothing(api):
    session_id = await a_session(api)
    async with browser(api) as client:
        for origin in ("http://evil.example", "null", "http://test.evil.example"):
            response = await client.post(
                f"/api/sessions/{session_id}/stop", headers={"Origin": origin, "Content-Type": "text/plain"}
            )
            assert response.status_code == 403, (origin, response.text)
            assert "Origin" in response.json()["detail"]
        restart = await client.post("/api/servers/file/restart", headers={"Origin": "http://evil.example"})
        assert restart.status_code == 403


async def test_a_cookie_write_without_origin_or_same_origin_fetch_metadata_is_403(api):
    session_id = await a_session(api)
    async with browser(api) as client:
        bare = await client.post(f"/api/sessions/{session_id}/stop")
        assert bare.status_code == 403
        same = await client.post(f"/api/sessions/{session_id}/stop", headers={"Sec-Fetch-Site": "same-origin"})
        assert same.status_code == 200, same.text


async def test_a_cookie_write_from_the_server_s_own_origin_goes_through_and_reads_are_unchecked(api):
    session_id = await a_session(api)
    async with browser(api) as client:
        own = await client.post(f"/api/sessions/{session_id}/stop", headers={"Origin": "http://test"})
        assert own.status_code == 200, own.text
        read = await client.get("/api/sessions", headers={"Origin": "http://evil.example"})
        assert read.status_code == 200


async def test_bearer_and_api_key_callers_are_not_checked_for_origin(api):
    session_id = await a_session(api)
    bearer = await api.client.post(f"/api/sessions/{session_id}/stop", headers={"Origin": "http://evil.example"})
    assert bearer.status_code == 200
    key = api.app.state.auth.create_api_key("origin-test", "approver")
    with_key = await api.anonymous.post(
        f"/api/sessions/{session_id}/stop", headers={"X-API-Key": key, "Origin": "http://evil.example"}
    )
    assert with_key.status_code == 200


async def test_a_configured_cors_origin_counts_as_this_site():
    scope = {"type": "http", "method": "POST", "path": "/api/x", "query_string": b"",
             "headers": [(b"host", b"overseer.local:8000"), (b"origin", b"https://dash.example")]}
    assert from_this_site(Request(scope), ["https://dash.example"])
    assert not from_this_site(Request(scope), [])


async def test_logout_signs_the_cookie_s_jwt_out_for_good(api):
    async with browser(api) as client:
        jwt = client.cookies["overseer_session"]
        out = await client.post("/api/auth/logout", headers={"Origin": "http://test"})
        assert out.status_code == 204
    replayed = await api.anonymous.get("/api/me", headers={"Authorization": f"Bearer {jwt}"})
    assert replayed.status_code == 401
    assert api.app.state.auth.authenticate(jwt) is None


async def test_logout_with_a_bearer_jwt_revokes_that_jwt_only(api):
    auth = api.app.state.auth
    kept, dropped = auth.login("admin", auth.token), auth.login("admin", auth.token)
    out = await api.anonymous.post("/api/auth/logout", headers={"Authorization": f"Bearer {dropped}"})
    assert out.status_code == 204
    assert (await api.anonymous.get("/api/me", headers={"Authorization": f"Bearer {dropped}"})).status_code == 401
    assert (await api.anonymous.get("/api/me", headers={"Authorization": f"Bearer {kept}"})).status_code == 200


async def test_a_cookie_left_from_before_does_not_stop_a_login_without_origin(api):
    async with browser(api) as client:
        again = await client.post("/api/auth/login", json={"username": "admin", "password": api.app.state.auth.token})
        assert again.status_code == 200
