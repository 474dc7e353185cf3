"""A tool call's clock stops while the person is asked on its behalf (backend/mcp/call_clock.py;
issue 35, item 5).

A real SDK server (tests/mcp/fixtures/elicitation_server.py) asks a question from inside its tool,
run with a short `call_timeout`. The question stays open past the call's original deadline and the
person's answer still reaches the tool (both protocol eras); a call that ends while its question is
open (its session stopped) withdraws the question, and an answer sent afterwards is refused as a
conflict (409) saying the call ended, instead of being accepted and going nowhere.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backend.domain.errors import ApprovalClosed, Conflict
from backend.domain.models import Decision
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

from tests.mcp.era_pools import ERAS, era_pools

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 60  # seconds; a bound on waits, never a timing assertion
CALL_TIMEOUT = 3  # seconds: the question must arrive within it (the server asks first thing)
SERVER = Path(__file__).parent / "fixtures" / "elicitation_server.py"
ALLOW = {"permissions": {"allow": ["mcp__ask"]}}
BOOKING = {"name": "Ada", "seats": 2, "vip": False, "meal": "veg"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pools(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, McpPool]]:
    """One pool per protocol era, the asking server's calls bounded by a short call_timeout."""
    async with era_pools(SERVER, "ask", tmp_path_factory.mktemp("call-clock"), bound=BOUND, call_timeout=CALL_TIMEOUT) as made:
        yield made


def book() -> list[Reply]:
    return [Reply(tool_calls=[ScriptedToolCall(name="mcp__ask__book", arguments={})]), Reply(text="noted")]


@pytest.mark.parametrize("era", ERAS)
async def test_a_question_open_past_the_calls_timeout_is_still_answered_and_reaches_the_tool(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, book(), pool=pools[era], **ALLOW) as h:
        session = await h.start("book a table")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.kind == "elicitation"
        # Longer than the call's whole timeout: the call must not end meanwhile (the clock stopped).
        with pytest.raises(TimeoutError):
            await h.host.runner.wait(session.id, timeout=CALL_TIMEOUT + 1)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once", updated_arguments=BOOKING))
        done = await h.host.runner.wait(session.id, timeout=BOUND)
        assert done.status == "completed", done.error
        [result] = h.model.requests[-1].tool_results()
    assert json.loads(result.text.splitlines()[-1]) == {"action": "accept", "content": BOOKING}


@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_to_a_question_whose_call_ended_is_a_conflict_saying_so(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, book(), pool=pools[era], **ALLOW) as h:
        session = await h.start("book a table")
        approval = await h.next_approval(timeout=BOUND)
        resolved = h.host.bus.subscribe(session.id)
        try:
            await h.host.runner.stop(session.id)  # the call ends; its server's question is still open
            while True:  # the question is withdrawn by the call ending (bounded wait, no sleep)
                event = await resolved.get(timeout=BOUND)
                if event.type == "approval.resolved" and event.data["id"] == approval.id:
                    break
        finally:
            h.host.bus.unsubscribe(resolved)
        closed = await h.host.store.get_approval(approval.id)
        assert closed.status == "cancelled"
        with pytest.raises(ApprovalClosed) as refused:
            await h.answer(approval, Decision(kind="allow_once", updated_arguments=BOOKING))
    assert isinstance(refused.value, Conflict)  # the API's 409
    assert "the tool call ended before an answer" in str(refused.value).lower()


STUBBORN = Path(__file__).parent / "fixtures" / "stubborn_asker_server.py"


async def test_a_question_the_server_never_withdraws_is_withdrawn_when_its_call_ends(tmp_path: Path):
    """The server ignores the call's cancellation, so nothing but the call's end closes its question."""
    config = McpServerConfig(command=sys.executable, args=[str(STUBBORN)], start_timeout=BOUND)
    pool = McpPool({"stubborn": config}, log_dir=tmp_path / "logs")
    await pool.start()
    script = [Reply(tool_calls=[ScriptedToolCall(name="mcp__stubborn__ask", arguments={})]), Reply(text="ok")]
    try:
        await pool.wait_ready(timeout=BOUND)
        await stop_while_asked(tmp_path, pool, script)
    finally:
        await pool.aclose()


async def stop_while_asked(tmp_path: Path, pool: McpPool, script: list[Reply]) -> None:
    """Stop the session while its server's question is open; the question is withdrawn, an answer refused."""
    async with scripted_host(tmp_path, script, pool=pool, permissions={"allow": ["mcp__stubborn"]}) as h:
        session = await h.start("ask me")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.kind == "elicitation"
        resolved = h.host.bus.subscribe(session.id)
        try:
            await h.host.runner.stop(session.id)
            while True:
                event = await resolved.get(timeout=BOUND)
                if event.type == "approval.resolved" and event.data["id"] == approval.id:
                    break
        finally:
            h.host.bus.unsubscribe(resolved)
        with pytest.raises(ApprovalClosed, match="ended before an answer"):
            await h.answer(approval, Decision(kind="allow_once", updated_arguments={"go": True}))
