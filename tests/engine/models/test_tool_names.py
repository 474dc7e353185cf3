"""Tool names past what model APIs take go as short, stable aliases and come back real (issue 35, item 3)."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from backend.domain.models import ToolCallRequest
from backend.engine.models.model_types import ModelTurn
from backend.engine.models.tool_names import MAX_TOOL_NAME, ToolNames, accepted, alias_of
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from peer_media_server import LONG_TOOL  # noqa: E402

SERVER_NAME = "modelcontextprotocol-everything-ref"
LONG = f"mcp__{SERVER_NAME}__{LONG_TOOL}"
API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "", "parameters": {"type": "object"}}}


def test_a_long_name_gets_an_alias_the_apis_take_and_the_same_one_every_time():
    assert len(LONG) == 76 and not accepted(LONG)
    alias = alias_of(LONG)
    assert API_NAME.fullmatch(alias) and len(alias) == MAX_TOOL_NAME
    assert alias == alias_of(LONG) and alias.startswith("mcp__modelcontextprotocol-everything-ref__get_")
    assert accepted("mcp__fs__read_file") and not accepted("mcp__srv__tools.read")
    assert API_NAME.fullmatch(alias_of("mcp__srv__tools.read"))


def test_names_that_share_their_start_get_different_aliases_and_short_names_are_left_alone():
    names = [LONG, LONG + "_v2", "mcp__fs__read_file"]
    table = ToolNames.for_request([tool(n) for n in names], [])
    assert set(table.aliases) == {LONG, LONG + "_v2"}
    assert len(set(table.aliases.values())) == 2
    tools, _ = table.outgoing([tool(n) for n in names], [])
    assert [t["function"]["name"] for t in tools][2] == "mcp__fs__read_file"
    assert all(API_NAME.fullmatch(t["function"]["name"]) for t in tools)


def test_an_alias_that_clashes_with_another_name_of_the_request_is_made_longer():
    taken = alias_of(LONG)
    table = ToolNames.for_request([tool(LONG), tool(taken)], [])
    assert table.aliases[LONG] != taken and API_NAME.fullmatch(table.aliases[LONG])


def test_earlier_calls_in_the_transcript_are_sent_by_alias_and_the_models_calls_come_back_real():
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": LONG, "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    table = ToolNames.for_request([], messages)  # the tool is no longer offered
    _, sent = table.outgoing([], messages)
    assert sent[1]["tool_calls"][0]["function"]["name"] == alias_of(LONG)
    assert messages[1]["tool_calls"][0]["function"]["name"] == LONG  # the caller's list is untouched
    turn = ModelTurn(tool_calls=[ToolCallRequest(id="c2", name=alias_of(LONG)), ToolCallRequest(id="c3", name="other")])
    assert [c.name for c in table.incoming(turn).tool_calls] == [LONG, "other"]


ENGINES = {
    "openai-direct": lambda m: {},
    "openai-via-litellm": lambda m: {"model_transport": "litellm"},
    "anthropic-direct": lambda m: {"model": "anthropic/claude-scripted", "api_base": m.anthropic_base},
    "anthropic-via-litellm": lambda m: {
        "model": "anthropic/claude-scripted",
        "api_base": m.anthropic_base,
        "model_transport": "litellm",
    },
    # Claude Code names a tool mcp__<server>__<tool> itself: the proxy lists it under its alias's tail.
    "claude-sdk": lambda m: {"default_engine": "claude-sdk"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def everything_pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    root = tmp_path_factory.mktemp("names")
    server = Path(__file__).parent / "fixtures" / "peer_media_server.py"
    config = McpServerConfig(command=sys.executable, args=[str(server)], start_timeout=30)
    async with McpPool({SERVER_NAME: config}, log_dir=root / "logs") as pool:
        await pool.wait_ready(timeout=60)
        yield pool


def every_name_is_one_the_apis_take(request: ModelRequest) -> list[str]:
    names = list(request.tool_names)
    for message in request.messages:  # earlier calls: OpenAI's tool_calls, Anthropic's tool_use blocks
        names += [c["function"]["name"] for c in message.get("tool_calls") or []]
        if isinstance(message.get("content"), list):
            names += [b["name"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert names and all(API_NAME.fullmatch(n) for n in names), [n for n in names if not API_NAME.fullmatch(n)]
    return names


def call_the_long_tool(request: ModelRequest) -> Reply:
    every_name_is_one_the_apis_take(request)
    [alias] = [n for n in request.tool_names if n.startswith(f"mcp__{SERVER_NAME}__get_annotated")]
    return Reply(tool_calls=[ScriptedToolCall(name=alias, arguments={})])


def answer(request: ModelRequest) -> Reply:
    names = every_name_is_one_the_apis_take(request)
    assert alias_of(LONG) in names  # the earlier call, under the same alias
    return Reply(text=f"it said: {request.last_tool_results()[0]}")


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("engine", ENGINES)
async def test_a_76_character_tool_name_round_trips_through_the_model_under_an_alias_on_every_path(
    tmp_path: Path, everything_pool: McpPool, engine: str
) -> None:
    allow = {"permissions": {"allow": [f"mcp__{SERVER_NAME}"]}}
    script = [call_the_long_tool, answer]
    async with scripted_host(tmp_path, script, pool=everything_pool, for_model=ENGINES[engine], **allow) as h:
        session = await h.run("call the long one", timeout=90)
        assert session.status == "completed", session.error
        [record] = await h.host.store.list_tool_calls(session.id)
        assert (record.name, record.status) == (LONG, "done")  # the transcript keeps the real name
        messages = await h.host.store.list_messages(session.id)
        assert [c.name for m in messages for c in m.tool_calls] == [LONG]
        assert messages[-1].content.startswith("it said: ")
        assert messages[-1].content.endswith("hello from the long-named tool")  # the result reached the model
        h.model.assert_all_used()
