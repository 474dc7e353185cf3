"""LiteLLM's aiohttp sessions end with the host that opened them (backend/engine/models/model_map.py)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import ClientSession

from backend.engine.models.model_map import litellm
from backend.testing import Reply
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _anthropic_through_litellm(server) -> dict:
    return {"model": "anthropic/scripted", "api_base": server.anthropic_base}


def _open_sessions() -> list[ClientSession]:
    """The aiohttp sessions LiteLLM's cached clients hold open on this loop."""
    loop = asyncio.get_running_loop()
    sessions = []
    for handler in litellm().in_memory_llm_clients_cache.cache_dict.values():
        client = getattr(handler, "_client", None) or getattr(handler, "client", None)
        session = getattr(getattr(client, "_transport", None), "client", None)
        if isinstance(session, ClientSession) and not session.closed and getattr(session, "_loop", None) is loop:
            sessions.append(session)
    return sessions


async def test_a_stopping_host_closes_the_aiohttp_sessions_litellm_opened_and_a_later_host_still_reaches_the_model(
    tmp_path, pool
):
    for round in ("first", "second"):  # the second host is handed the same cached clients
        async with scripted_host(
            tmp_path / round, [Reply(text="hi")], pool=pool, model_transport="litellm", for_model=_anthropic_through_litellm
        ) as h:
            session = await h.run("hello")
            assert session.status == "completed", session.error
            opened = _open_sessions()
            assert opened  # the call went through LiteLLM's aiohttp transport
        assert all(s.closed for s in opened)
        assert _open_sessions() == []
