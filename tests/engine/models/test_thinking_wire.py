"""Extended thinking (issue 16) on the wire, without a model: the budget fits under max_tokens on
the direct Anthropic path, and only the open turn's signed blocks go back, and only to an
Anthropic model. (Plain functions: tests/engine/models/test_thinking.py runs every path.)"""

from __future__ import annotations

import json

from backend.config import ThinkingConfig
from backend.domain.models import Message, SignedThinking, ToolCallRequest
from backend.engine.loop import to_wire
from backend.engine.models.anthropic_direct import AnthropicRequest
from backend.engine.models.thinking import for_model


def test_the_thinking_budget_fits_under_max_tokens_on_the_direct_anthropic_path():
    request = AnthropicRequest(
        model="anthropic/x",
        messages=[{"role": "user", "content": "hi"}],
        tools=[],
        api_base=None,
        api_key=None,
        read_timeout=1,
        extra={"thinking": {"type": "enabled", "budget_tokens": 8000}},
        max_tokens_default=4096,
    )
    body = json.loads(request.body())
    assert body["thinking"]["budget_tokens"] == 8000 and body["max_tokens"] > 8000


def _history() -> list[Message]:
    signed = [SignedThinking(type="thinking", thinking="old", signature="s1")]
    open_signed = [SignedThinking(type="thinking", thinking="new", signature="s2")]
    call = ToolCallRequest(id="c1", name="mcp__shell__exec", arguments={})
    return [
        Message(session_id="s", idx=0, role="user", content="one"),
        Message(session_id="s", idx=1, role="assistant", content="done", thinking="old", thinking_blocks=signed),
        Message(session_id="s", idx=2, role="user", content="two"),
        Message(session_id="s", idx=3, role="assistant", tool_calls=[call], thinking="new", thinking_blocks=open_signed),
        Message(session_id="s", idx=4, role="tool", tool_call_id="c1", name="mcp__shell__exec", content="ok"),
    ]


def test_only_the_open_turn_carries_its_signed_blocks_and_only_to_an_anthropic_model_thinking():
    wire = to_wire("", _history())
    assistants = [m for m in wire if m["role"] == "assistant"]
    assert "thinking_blocks" not in assistants[0]
    assert assistants[1]["thinking_blocks"] == [{"type": "thinking", "thinking": "new", "signature": "s2"}]
    assert "old" not in json.dumps(wire)
    on = ThinkingConfig(enabled=True)
    assert for_model(wire, "anthropic/claude-x", on) is wire
    for model, config in [("openai/gpt-x", on), ("anthropic/claude-x", ThinkingConfig(enabled=False)), ("anthropic/claude-x", None)]:
        assert "new" not in json.dumps(for_model(wire, model, config))
