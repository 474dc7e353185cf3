"""Prompt caching (backend/engine/models/caching.py): Anthropic requests mark the system prompt and tools."""

from __future__ import annotations

import pytest

from backend.engine.models.caching import wants_cache_control, with_cache_control
from backend.engine.loop import tool_schemas
from backend.engine.models.client import LiteLLMClient
from backend.domain.tools import ToolInfo
from backend.testing import Reply, ScriptedModelServer

TOOLS = tool_schemas(
    [ToolInfo(name=f"mcp__file__{n}", server="file", tool=n, description=n) for n in ("read_file", "write_file")]
)
MESSAGES = [{"role": "system", "content": "You are Overseer."}, {"role": "user", "content": "hi"}]


async def ignore(*_: object) -> None:
    return None


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "litellm"])
async def test_an_anthropic_request_carries_cache_control_on_the_system_prompt_and_the_last_tool(direct: bool) -> None:
    with ScriptedModelServer([Reply(text="hello")]) as server:
        client = LiteLLMClient(
            model="anthropic/claude-test", api_base=server.anthropic_base, api_key="k", retries=0, direct=direct
        )
        turn = await client.complete(messages=MESSAGES, tools=TOOLS, on_delta=ignore, on_retry=ignore)
        assert turn.text == "hello"
        raw = server.requests[0].raw
        assert raw["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert raw["system"][-1]["text"] == "You are Overseer."
        assert raw["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in raw["tools"][0]


async def test_an_openai_request_is_sent_unmarked() -> None:
    with ScriptedModelServer([Reply(text="hello")]) as server:
        client = LiteLLMClient(model="openai/gpt-test", api_base=server.openai_base, api_key="k", retries=0)
        await client.complete(messages=MESSAGES, tools=TOOLS, on_delta=ignore, on_retry=ignore)
        raw = server.requests[0].raw
        assert raw["messages"][0] == {"role": "system", "content": "You are Overseer."}
        assert all("cache_control" not in t for t in raw["tools"])


def test_claude_on_other_providers_is_marked_and_other_models_are_not() -> None:
    assert wants_cache_control("bedrock/anthropic.claude-3-5-sonnet")
    assert wants_cache_control("anthropic/any-model")
    assert not wants_cache_control("openai/gpt-4o") and not wants_cache_control("ollama/llama3")


def test_marking_leaves_the_callers_messages_and_tools_untouched() -> None:
    messages, tools = with_cache_control(MESSAGES, TOOLS)
    assert MESSAGES[0]["content"] == "You are Overseer." and "cache_control" not in TOOLS[-1]
    assert messages[1] is MESSAGES[1] and tools[0] is TOOLS[0]
