"""Bodies are capped per route before anything reads them (issue 13, item 10)."""

from __future__ import annotations

import pytest

from backend.api.body_limit import DEFAULT_CAP, MIB, body_cap

on_the_pools_loop = pytest.mark.asyncio(loop_scope="module")  # the `api` fixture's (conftest.py)


async def chunks(total: int, size: int = 256 * 1024):
    sent = 0
    while sent < total:
        yield b"x" * min(size, total - sent)
        sent += size


def test_each_route_has_the_cap_its_largest_honest_body_needs():
    assert body_cap("POST", "/api/auth/login") == 64 * 1024
    assert body_cap("POST", "/api/sessions/abc/messages") == 96 * MIB  # ten images
    assert body_cap("POST", "/mcp") == 16 * MIB
    assert body_cap("PUT", "/api/modes/x") == DEFAULT_CAP


@on_the_pools_loop
async def test_a_declared_body_over_the_cap_is_refused_before_authentication(api):
    response = await api.anonymous.post(
        "/api/auth/login", content=b"x" * (64 * 1024 + 1), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert "65,536 bytes" in response.json()["detail"]
    unauthenticated = await api.anonymous.put("/api/modes/x", content=b"x" * (DEFAULT_CAP + 1))
    assert unauthenticated.status_code == 413  # not 401: the body was never read


@on_the_pools_loop
async def test_a_chunked_body_is_cut_off_at_the_cap(api):
    response = await api.client.put(
        "/api/permissions", content=chunks(DEFAULT_CAP + 1), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413


@on_the_pools_loop
async def test_a_body_under_the_cap_goes_on_to_authentication_and_the_route(api):
    assert (await api.anonymous.put("/api/modes/x", json={"prompt": "hi"})).status_code == 401
    assert (await api.client.post("/api/auth/login", json={"password": "wrong"})).status_code == 401
