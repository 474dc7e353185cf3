"""Placing a server's question in the session whose call it belongs to (backend/mcp/elicitation.py).

The handshake era gives the question no link to a request on the stdio wire: it is placed only
when every call in flight on that server is one session's; otherwise it is declined, saying why.
"""

from __future__ import annotations

import asyncio
import contextvars

import anyio
import mcp_types

from backend.mcp.elicitation import DECLINE_REASON_META_KEY, CallInFlight, Elicitation, ElicitationRouter

BOUND = 10
FORM = mcp_types.ElicitRequestFormParams(message="Name?", requested_schema={"type": "object", "properties": {}})


async def from_read_loop(router: ElicitationRouter) -> mcp_types.ElicitResult:
    """Route as the connection's read loop does: in a task started outside any call's context."""
    task = asyncio.get_running_loop().create_task(router.route("ask", FORM), context=contextvars.Context())
    with anyio.fail_after(BOUND):
        return await task


def router_asking() -> tuple[ElicitationRouter, list[Elicitation]]:
    router = ElicitationRouter()
    asked: list[Elicitation] = []

    async def handler(question: Elicitation) -> mcp_types.ElicitResult:
        asked.append(question)
        return mcp_types.ElicitResult(action="accept", content={})

    router.handler = handler
    return router, asked


async def test_a_question_while_one_sessions_call_runs_is_asked_in_that_session():
    router, asked = router_asking()
    call = CallInFlight(server="ask", tool="mcp__ask__book", session_id="s1", call_id="c1")
    with router.calling(call):
        result = await from_read_loop(router)
    assert result.action == "accept"
    assert [(q.call, q.message) for q in asked] == [(call, "Name?")]


async def test_a_question_while_two_sessions_calls_run_is_declined_saying_why():
    router, asked = router_asking()
    one = CallInFlight(server="ask", tool="mcp__ask__book", session_id="s1")
    two = CallInFlight(server="ask", tool="mcp__ask__book", session_id="s2")
    with router.calling(one), router.calling(two):
        result = await from_read_loop(router)
    assert result.action == "decline"
    assert "nobody Overseer can ask" in (result.meta or {})[DECLINE_REASON_META_KEY]
    assert asked == []


async def test_a_question_inside_a_call_is_placed_by_the_calls_own_context_even_among_others():
    router, asked = router_asking()
    mine = CallInFlight(server="ask", tool="mcp__ask__book", session_id="s1")
    other = CallInFlight(server="ask", tool="mcp__ask__book", session_id="s2")
    with router.calling(other), router.calling(mine):
        await router.route("ask", FORM)  # inside the call's own task (2026-07-28)
    assert [q.call.session_id for q in asked] == ["s1"]


async def test_a_pool_with_nobody_to_ask_declines():
    router = ElicitationRouter()
    with router.calling(CallInFlight(server="ask", tool="mcp__ask__book", session_id="s1")):
        result = await router.route("ask", FORM)
    assert result.action == "decline"
