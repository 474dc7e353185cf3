"""A server's question (`elicitation/create`) is asked as an approval in the calling session.

A real MCP server process (tests/mcp/fixtures/elicitation_server.py, written with the SDK) asks
for a booking form from inside its tool; the scripted model calls that tool through the gate and
the shared pool, a person answers the approval, and the tool's result says what came back. Both
protocol eras: a request mid-call (handshake era, `ctx.elicit`) and a question riding the call's
InputRequiredResult (2026-07-28). No sleeps: every wait is bounded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backend.domain.errors import Invalid
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.approvals.elicitation_desk import ElicitationContentInvalid, checked_content
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

from tests.mcp.era_pools import ERAS, era_pools

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 60  # seconds; a bound on waits, never a timing assertion
SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "elicitation_server.py"
ALLOW = {"permissions": {"allow": ["mcp__ask"]}}
BOOKING = {"name": "Ada", "seats": 2, "vip": True, "meal": "fish"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pools(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, McpPool]]:
    """One pool per protocol era, each running the elicitation server as a real process."""
    async with era_pools(SERVER, "ask", tmp_path_factory.mktemp("elicitation"), bound=BOUND) as made:
        yield made


def book() -> list[Reply]:
    return [Reply(tool_calls=[ScriptedToolCall(name="mcp__ask__book", arguments={})]), Reply(text="noted")]


async def asked_and_answered(tmp_path: Path, pool: McpPool, decision: Decision | None, **settings) -> dict:
    """Run a session whose tool asks; answer its question with `decision` (None: leave it); the tool's report."""
    async with scripted_host(tmp_path, book(), pool=pool, **ALLOW, **settings) as h:
        session = await h.start("book a table")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.kind == "elicitation"
        assert approval.session_id == session.id
        if decision is not None:
            await h.answer(approval, decision)
        session = await h.host.runner.wait(session.id, timeout=BOUND)
        assert session.status == "completed", session.error
        [result] = h.model.requests[-1].tool_results()
        closed = await h.host.store.get_approval(approval.id)
        return {"tool": json.loads(result.text), "status": closed.status}


@pytest.mark.parametrize("era", ERAS)
async def test_a_servers_question_is_an_approval_in_the_calling_session_showing_its_form(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, book(), pool=pools[era], **ALLOW) as h:
        session = await h.start("book a table")
        approval = await h.next_approval(timeout=BOUND)
        assert (approval.kind, approval.session_id, approval.tool_name) == ("elicitation", session.id, "mcp__ask__book")
        assert approval.arguments["server"] == "ask"
        assert approval.arguments["message"] == "Booking a table: who is it for, and how many seats?"
        schema = approval.arguments["schema"]
        assert schema["required"] == ["name", "seats", "meal"]
        assert schema["properties"]["meal"]["enum"] == ["veg", "fish", "meat"]
        assert (await h.host.store.get_session(session.id)).status == "waiting_approval"
        await h.answer(approval, Decision(kind="cancel"))
        await h.host.runner.wait(session.id, timeout=BOUND)


@pytest.mark.parametrize("era", ERAS)
async def test_accepting_the_form_gives_the_tool_what_the_person_filled_in(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    seen = await asked_and_answered(tmp_path, pools[era], Decision(kind="allow_once", updated_arguments=BOOKING))
    assert seen == {"tool": {"action": "accept", "content": BOOKING}, "status": "allowed"}


@pytest.mark.parametrize("era", ERAS)
async def test_denying_the_form_declines_it(tmp_path: Path, pools: dict[str, McpPool], era: str):
    seen = await asked_and_answered(tmp_path, pools[era], Decision(kind="deny"))
    assert seen == {"tool": {"action": "decline"}, "status": "denied"}


@pytest.mark.parametrize("era", ERAS)
async def test_cancelling_the_form_cancels_it(tmp_path: Path, pools: dict[str, McpPool], era: str):
    seen = await asked_and_answered(tmp_path, pools[era], Decision(kind="cancel"))
    assert seen == {"tool": {"action": "cancel"}, "status": "cancelled"}


async def test_an_unanswered_question_times_out_as_a_cancel(tmp_path: Path, pools: dict[str, McpPool]):
    seen = await asked_and_answered(tmp_path, pools["legacy"], None, approval_timeout=1)
    assert seen == {"tool": {"action": "cancel"}, "status": "expired"}


async def test_a_value_that_does_not_fit_the_form_is_refused_naming_the_field(
    tmp_path: Path, pools: dict[str, McpPool]
):
    async with scripted_host(tmp_path, book(), pool=pools["legacy"], **ALLOW) as h:
        session = await h.start("book a table")
        approval = await h.next_approval(timeout=BOUND)
        with pytest.raises(Invalid, match="'seats'"):
            await h.answer(approval, Decision(kind="allow_once", updated_arguments={**BOOKING, "seats": 12}))
        with pytest.raises(Invalid):
            await h.answer(approval, Decision(kind="allow_always"))
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once", updated_arguments=BOOKING))
        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"


async def test_content_is_checked_against_every_kind_of_field_the_spec_allows():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date"},
            "meal": {"type": "string", "enum": ["veg", "fish"]},
            "seats": {"type": "integer", "minimum": 1},
            "price": {"type": "number"},
            "vip": {"type": "boolean"},
        },
        "required": ["name"],
    }
    assert checked_content(schema, {"name": "Ada", "seats": 2.0, "vip": False}) == {"name": "Ada", "seats": 2, "vip": False}
    wrong = [
        ({}, "'name'"),
        ({"name": "A"}, "'name'"),
        ({"name": "Ada", "email": "nope"}, "'email'"),
        ({"name": "Ada", "when": "tomorrow"}, "'when'"),
        ({"name": "Ada", "meal": "pie"}, "'meal'"),
        ({"name": "Ada", "seats": 1.5}, "'seats'"),
        ({"name": "Ada", "seats": 0}, "'seats'"),
        ({"name": "Ada", "price": "cheap"}, "'price'"),
        ({"name": "Ada", "vip": "yes"}, "'vip'"),
        ({"name": "Ada", "extra": 1}, "'extra'"),
    ]
    for content, field in wrong:
        with pytest.raises(ElicitationContentInvalid, match=field):
            checked_content(schema, content)
