"""A server's multi-select question answered over REST (POST /api/approvals/{id}; issue 35, item 4).

A real SDK server (tests/mcp/fixtures/multiselect_server.py, handshake era) asks for an order with
multi-selects and a titled single-select; the REST door accepts lists of choices (it used to answer
422 "has a type the form cannot take"), refuses a choice the form does not list, naming the field,
and fills in the defaults of the fields an answer leaves out.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from tests.api.conftest import serve_api

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 60  # seconds; a bound on waits, never a timing assertion
SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "multiselect_server.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pizza_pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """The multi-select server as a real process (handshake era: the question comes mid-call)."""
    config = McpServerConfig(command=sys.executable, args=[str(SERVER), "--legacy"], start_timeout=BOUND)
    pool = McpPool({"pizza": config}, log_dir=tmp_path_factory.mktemp("pizza"))
    await pool.start()
    try:
        await pool.wait_ready(timeout=BOUND)
        yield pool
    finally:
        await pool.aclose()


async def asked(api) -> dict:
    """Start a session whose tool asks; the pending question as the REST API shows it."""
    api.model.push(Reply(tool_calls=[ScriptedToolCall(name="mcp__pizza__order", arguments={})]), Reply(text="ok"))
    sub = api.host.bus.subscribe(None)
    try:
        session = (await api.client.post("/api/sessions", json={"prompt": "order a pizza"})).json()
        while True:
            event = await sub.get(timeout=BOUND)
            if event.type == "approval.requested":
                return {"session": session["id"], "approval": event.data}
    finally:
        api.host.bus.unsubscribe(sub)


async def reported(api, session_id: str) -> dict:
    """What the tool received, from its JSON report (the last line of its result)."""
    done = await api.host.runner.wait(session_id, timeout=BOUND)
    assert done.status == "completed", done.error
    [result] = api.model.requests[-1].tool_results()
    return json.loads(result.text.splitlines()[-1])


async def test_a_multi_select_is_answered_over_rest_with_lists_of_choices(tmp_path, pizza_pool):
    async with serve_api(tmp_path, pizza_pool, permissions={"allow": ["mcp__pizza"]}) as api:
        question = await asked(api)
        url = f"/api/approvals/{question['approval']['id']}"
        outside = await api.client.post(
            url, json={"decision": "allow_once", "updated_arguments": {"toppings": ["pineapple"], "size": "s"}}
        )
        assert outside.status_code == 422 and "'toppings'" in outside.json()["detail"]
        chosen = {"toppings": ["ham", "basil"], "sides": ["salad"], "size": "l"}
        answered = await api.client.post(url, json={"decision": "allow_once", "updated_arguments": chosen})
        assert answered.status_code == 200, answered.text
        assert await reported(api, question["session"]) == {"action": "accept", "content": chosen}


async def test_fields_a_rest_answer_leaves_out_take_the_schema_s_defaults(tmp_path, pizza_pool):
    async with serve_api(tmp_path, pizza_pool, permissions={"allow": ["mcp__pizza"]}) as api:
        question = await asked(api)
        url = f"/api/approvals/{question['approval']['id']}"
        answered = await api.client.post(url, json={"decision": "allow_once", "updated_arguments": {"sides": ["fries"]}})
        assert answered.status_code == 200, answered.text
        assert answered.json()["decision"]["updated_arguments"] == {"toppings": ["cheese"], "size": "m", "sides": ["fries"]}
        assert await reported(api, question["session"]) == {
            "action": "accept",
            "content": {"toppings": ["cheese"], "sides": ["fries"], "size": "m"},
        }
