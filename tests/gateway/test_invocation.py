"""invoke_agent of the gateway (backend/gateway/invocation.py) and named agents (issue 19): a call
that names an agent runs in its workspace, one that names none follows the `gateway` route, else
main; an unknown agent is an error result the caller can read."""

from __future__ import annotations

import anyio
import pytest
from gateway_testkit import BOUND
from mcp import Client

from backend.gateway import Gateway, build_server
from backend.testing import Reply
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")


def reviewer(tmp_path, **settings: object) -> dict[str, object]:
    (tmp_path / "reviews").mkdir(exist_ok=True)
    return {"agents": [{"id": "reviewer", "workspace": str(tmp_path / "reviews"), "model": "openai/review-model"}], **settings}


async def test_invoke_agent_naming_an_agent_runs_in_that_agents_workspace_with_its_model(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(text="looks good")], pool=pool, **reviewer(tmp_path)) as h:
        async with Client(build_server(Gateway(h.host.app_services))) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "review", "agent": "reviewer"})
        assert result.is_error is False and result.content[0].text == "looks good"
        session = await h.host.store.get_session(result.structured_content["session_id"])
        assert (session.agent_id, session.workspace) == ("reviewer", str((tmp_path / "reviews").resolve()))
        assert h.model.requests[0].model == "review-model"


async def test_invoke_agent_naming_no_agent_follows_the_gateway_route(tmp_path, pool):
    routes = [{"channel": "telegram", "agent": "main"}, {"channel": "gateway", "agent": "reviewer"}]
    async with scripted_host(tmp_path, [Reply(text="routed")], pool=pool, **reviewer(tmp_path, routes=routes)) as h:
        async with Client(build_server(Gateway(h.host.app_services))) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "review"})
        session = await h.host.store.get_session(result.structured_content["session_id"])
        assert session.agent_id == "reviewer"


async def test_invoke_agent_with_an_unknown_agent_is_an_error_result_naming_the_agents(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool, **reviewer(tmp_path)) as h:
        async with Client(build_server(Gateway(h.host.app_services))) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "review", "agent": "ghost"})
        assert result.is_error is True
        assert "no agent 'ghost' is configured (agents: main, reviewer)" in result.content[0].text
        assert await h.host.store.list_sessions() == [] and h.model.requests == []


async def test_invoke_agent_continuing_a_session_and_naming_an_agent_is_refused_and_sends_nothing(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(text="first")], pool=pool, **reviewer(tmp_path)) as h:
        async with Client(build_server(Gateway(h.host.app_services))) as client:
            with anyio.fail_after(BOUND):
                first = await client.call_tool("invoke_agent", {"prompt": "start"})
                session_id = first.structured_content["session_id"]
                result = await client.call_tool(
                    "invoke_agent", {"prompt": "more", "session_id": session_id, "agent": "reviewer"}
                )
        assert result.is_error is True
        assert "give session_id or agent, not both" in result.content[0].text
        assert len(h.model.requests) == 1
