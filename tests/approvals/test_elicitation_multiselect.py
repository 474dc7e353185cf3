"""Multi-select and titled choices in a server's question (2025-11-25 elicitation schema; issue 35, item 4).

A real SDK server (tests/mcp/fixtures/multiselect_server.py) asks for an order with an untitled
multi-select (`items.enum`, a default, `minItems`/`maxItems`), a titled one (`items.anyOf`) and a
titled single-select (`oneOf`). The answer reaches the tool as the SDK validated it, in both
protocol eras; an answer that leaves fields out gets the schema's defaults, on every door, the
terminal's `--approve all` (which sends no content at all) included.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backend.approvals.elicitation_desk import ElicitationContentInvalid, checked_content
from backend.domain.errors import Invalid
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.terminal import TerminalUI
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

from tests.mcp.era_pools import ERAS, era_pools

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 60  # seconds; a bound on waits, never a timing assertion
SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "multiselect_server.py"
ALLOW = {"permissions": {"allow": ["mcp__pizza"]}}
DEFAULTS = {"toppings": ["cheese"], "sides": [], "size": "m"}  # what the server's model has for `{}`

SCHEMA = {
    "type": "object",
    "properties": {
        "toppings": {
            "type": "array",
            "items": {"type": "string", "enum": ["cheese", "ham", "olives"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["cheese"],
        },
        "sides": {"type": "array", "items": {"anyOf": [{"const": "fries", "title": "French fries"}]}},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}]},
        "crust": {"type": "string", "enum": ["thin", "thick"], "default": "stuffed"},  # a default that does not fit
    },
    "required": ["toppings", "size"],
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pools(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, McpPool]]:
    """One pool per protocol era, each running the multi-select server as a real process."""
    async with era_pools(SERVER, "pizza", tmp_path_factory.mktemp("multiselect"), bound=BOUND) as made:
        yield made


def reported(text: str) -> dict:
    """The tool's JSON report: its last line (the host may put a note about outside content above it)."""
    return json.loads(text.splitlines()[-1])


def order() -> list[Reply]:
    return [Reply(tool_calls=[ScriptedToolCall(name="mcp__pizza__order", arguments={})]), Reply(text="ordered")]


async def test_a_multi_select_takes_distinct_listed_choices_within_its_bounds():
    given = {"toppings": ["ham", "olives"], "sides": ["fries"], "size": "s"}
    assert checked_content(SCHEMA, given) == given
    wrong = [
        ({"toppings": ["pineapple"], "size": "s"}, "'toppings' takes only cheese, ham, olives"),
        ({"toppings": ["ham", "ham"], "size": "s"}, "'toppings' names a choice twice"),
        ({"toppings": [], "size": "s"}, "'toppings' needs at least 1"),
        ({"toppings": ["cheese", "ham", "olives"], "size": "s"}, "'toppings' takes at most 2"),
        ({"toppings": "ham", "size": "s"}, "'toppings' must be a list"),
        ({"sides": ["chips"], "size": "s"}, "'sides' takes only fries"),
        ({"size": "xl"}, "'size' must be one of s, m"),
    ]
    for content, message in wrong:
        with pytest.raises(ElicitationContentInvalid, match=message):
            checked_content(SCHEMA, content)


async def test_a_field_left_out_takes_its_default_and_a_default_that_does_not_fit_is_not_sent():
    assert checked_content(SCHEMA, {"size": "s"}) == {"toppings": ["cheese"], "size": "s"}
    assert checked_content(SCHEMA, {"toppings": None, "size": "s"}) == {"toppings": ["cheese"], "size": "s"}
    with pytest.raises(ElicitationContentInvalid, match="'size' is required"):
        checked_content(SCHEMA, None)  # no default for it: someone has to choose


@pytest.mark.parametrize("era", ERAS)
async def test_the_person_s_choices_reach_the_server_as_lists(tmp_path: Path, pools: dict[str, McpPool], era: str):
    chosen = {"toppings": ["ham", "olives"], "sides": ["fries", "salad"], "size": "l"}
    async with scripted_host(tmp_path, order(), pool=pools[era], **ALLOW) as h:
        session = await h.start("order a pizza")
        approval = await h.next_approval(timeout=BOUND)
        schema = approval.arguments["schema"]
        assert schema["properties"]["toppings"]["items"]["enum"] == ["cheese", "ham", "olives", "basil"]
        assert schema["properties"]["sides"]["items"]["anyOf"][0] == {"const": "fries", "title": "French fries"}
        with pytest.raises(Invalid, match="'toppings' takes at most 3"):
            await h.answer(approval, Decision(kind="allow_once", updated_arguments={**chosen, "toppings": ["cheese", "ham", "olives", "basil"]}))
        await h.answer(approval, Decision(kind="allow_once", updated_arguments=chosen))
        done = await h.host.runner.wait(session.id, timeout=BOUND)
        assert done.status == "completed", done.error
        [result] = h.model.requests[-1].tool_results()
    assert reported(result.text) == {"action": "accept", "content": chosen}


@pytest.mark.parametrize("era", ERAS)
async def test_approve_all_in_the_terminal_accepts_the_form_with_its_defaults(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, order(), pool=pools[era], **ALLOW) as h:
        session = await h.start("order a pizza")
        approval = await h.next_approval(timeout=BOUND)
        out = io.StringIO()
        await TerminalUI(h.host, approve="all", out=out, read_line=lambda _: "n").answer(approval)
        assert "not applied" not in out.getvalue()
        done = await h.host.runner.wait(session.id, timeout=BOUND)
        assert done.status == "completed", done.error
        [result] = h.model.requests[-1].tool_results()
        closed = await h.host.store.get_approval(approval.id)
    assert reported(result.text) == {"action": "accept", "content": DEFAULTS}
    assert closed.decision is not None and closed.decision.updated_arguments == {"toppings": ["cheese"], "size": "m"}
