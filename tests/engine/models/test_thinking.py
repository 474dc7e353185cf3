"""Extended thinking (issue 16) on every path to a model: both wire formats, direct and through
LiteLLM, and the Claude Agent SDK's CLI. Reasoning streams as its own ephemeral event, is stored
with the assistant message, is asked for as the settings say, and never goes back to the model
once its turn is answered (Anthropic's signed blocks go back only within their own tool loop)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from backend.config import ThinkingConfig
from backend.engine.models.thinking import effort_for
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host
from backend.testing.script import ModelRequest, signature_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

THOUGHT = "First I weigh the options; the second one is safer."
BUDGET = 2048
THINKING_ON = {"thinking": {"enabled": True, "budget_tokens": BUDGET}}

# Each path to the model: the loop over an OpenAI-style and an Anthropic model, each streamed
# directly and through LiteLLM, and Claude Code's own loop (the CLI speaks Anthropic's API; it asks
# a model it knows takes a budget for exactly that, and others for adaptive thinking).
PATHS: dict[str, Callable[[ScriptedModelServer], dict[str, Any]]] = {
    "openai-direct": lambda m: {},
    "openai-litellm": lambda m: {"model_transport": "litellm"},
    "anthropic-direct": lambda m: {"model": "anthropic/claude-scripted", "api_base": m.anthropic_base},
    "anthropic-litellm": lambda m: {
        "model": "anthropic/claude-scripted",
        "api_base": m.anthropic_base,
        "model_transport": "litellm",
    },
    "claude-sdk": lambda m: {"default_engine": "claude-sdk", "model": "anthropic/claude-sonnet-4-5"},
}
LOOP_PATHS = [p for p in PATHS if p != "claude-sdk"]
ANTHROPIC_LOOP_PATHS = ["anthropic-direct", "anthropic-litellm"]
ALLOW_SHELL = {"policies": {"mcp__shell__exec": "always_allow"}}


def host_on(path: str, tmp_path, script, pool, **settings: Any):
    return scripted_host(tmp_path, script, pool=pool, for_model=PATHS[path], **settings)


def asked_for_thinking(path: str, request: ModelRequest) -> bool:
    """Whether the request asks for thinking in the form its path uses, with the configured budget."""
    if path.startswith("openai"):
        return request.raw.get("reasoning_effort") == effort_for(BUDGET)
    thinking = request.raw.get("thinking") or {}
    return thinking.get("type") == "enabled" and thinking.get("budget_tokens") == BUDGET


async def send_and_wait(h: Harness, session_id: str, text: str) -> None:
    await h.host.runner.send(session_id, text)
    session = await h.host.runner.wait(session_id, timeout=90)
    assert session.status == "completed", session.error


@pytest.mark.parametrize("path", PATHS)
async def test_reasoning_streams_as_its_own_event_and_is_stored_with_the_answer(tmp_path, pool, path):
    async with host_on(path, tmp_path, [Reply(thinking=THOUGHT, text="The second one.")], pool, **THINKING_ON) as h:
        session = await h.run("which one?", timeout=90)
        assert session.status == "completed", session.error
        seen = [e for e in h.events.drain() if e.session_id == session.id]
        thoughts = [e for e in seen if e.type == "thinking.delta"]
        assert "".join(e.data["text"] for e in thoughts) == THOUGHT
        assert all(e.ephemeral for e in thoughts)
        # Before the answer: the dashboard shows it above the text as it streams.
        assert seen.index(thoughts[-1]) < min(i for i, e in enumerate(seen) if e.type == "token")
        [answer] = [m for m in await h.host.store.list_messages(session.id) if m.role == "assistant"]
        assert (answer.content, answer.thinking) == ("The second one.", THOUGHT)
        assert not [e for e in await h.host.store.list_events(session.id) if e.type == "thinking.delta"]
        assert asked_for_thinking(path, h.model.requests[0])
        h.model.assert_all_used()


@pytest.mark.parametrize("path", LOOP_PATHS)
async def test_reasoning_is_never_sent_back_in_a_later_turn(tmp_path, pool, path):
    script = [Reply(thinking=THOUGHT, text="first answer"), Reply(text="second answer")]
    async with host_on(path, tmp_path, script, pool, **THINKING_ON) as h:
        session = await h.run("one", timeout=60)
        await send_and_wait(h, session.id, "two")
        later = h.model.requests[1]
        assert later.last_prompt() == "two" and "first answer" in json.dumps(later.messages)
        assert THOUGHT not in json.dumps(later.raw)
        assert not later.carries_reasoning()
        h.model.assert_all_used()


async def test_claude_code_keeps_reasoning_for_the_person_and_no_thinking_text_leaves_our_side(tmp_path, pool):
    # The CLI resumes its own transcript, signed thinking blocks included (the Messages API drops
    # an earlier turn's thinking from the context itself): that is Claude Code's own business.
    # Ours is that stored reasoning never goes into a prompt we send (the next message goes alone).
    script = [Reply(thinking=THOUGHT, text="first answer"), Reply(text="second answer")]
    async with host_on("claude-sdk", tmp_path, script, pool, **THINKING_ON) as h:
        session = await h.run("one", timeout=90)
        await send_and_wait(h, session.id, "two")
        prompt = h.model.requests[1].last_prompt()
        assert prompt.endswith("two") and THOUGHT not in prompt
        [first, _] = [m for m in await h.host.store.list_messages(session.id) if m.role == "assistant"]
        assert first.thinking == THOUGHT
        h.model.assert_all_used()


@pytest.mark.parametrize("path", ANTHROPIC_LOOP_PATHS)
async def test_signed_thinking_goes_back_unmodified_within_its_tool_loop_and_never_after(tmp_path, pool, path):
    second = "The echo worked; I can answer."
    script = [
        Reply(
            thinking=THOUGHT,
            redacted_thinking="ENCRYPTED-REASONING",
            tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo hi"})],
        ),
        Reply(thinking=second, text="It printed hi."),
        Reply(text="You are welcome."),
    ]
    async with host_on(path, tmp_path, script, pool, **THINKING_ON, **ALLOW_SHELL) as h:
        session = await h.run("run echo", timeout=60)
        assert session.status == "completed", session.error
        continuation = h.model.requests[1]
        # The Messages API wants the turn's blocks back first in its assistant message, as signed.
        assert continuation.thinking_blocks() == [
            {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)},
            {"type": "redacted_thinking", "data": "ENCRYPTED-REASONING"},
        ]
        [assistant] = [m for m in continuation.messages if m["role"] == "assistant"]
        assert [b["type"] for b in assistant["content"]][:3] == ["thinking", "redacted_thinking", "tool_use"]
        [stored, _] = [m for m in await h.host.store.list_messages(session.id) if m.role == "assistant"]
        assert stored.thinking == THOUGHT and len(stored.thinking_blocks) == 2

        await send_and_wait(h, session.id, "thanks")
        later = json.dumps(h.model.requests[2].raw)
        assert h.model.requests[2].thinking_blocks() == []
        assert THOUGHT not in later and second not in later and "ENCRYPTED-REASONING" not in later
        h.model.assert_all_used()


@pytest.mark.parametrize("path", ["openai-direct", "openai-litellm"])
async def test_an_openai_style_tool_loop_carries_no_reasoning(tmp_path, pool, path):
    script = [
        Reply(thinking=THOUGHT, tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "echo hi"})]),
        Reply(text="It printed hi."),
    ]
    async with host_on(path, tmp_path, script, pool, **THINKING_ON, **ALLOW_SHELL) as h:
        session = await h.run("run echo", timeout=60)
        assert session.status == "completed", session.error
        continuation = h.model.requests[1]
        assert continuation.tool_results()[0].text.startswith("hi")
        assert THOUGHT not in json.dumps(continuation.raw) and not continuation.carries_reasoning()


@pytest.mark.parametrize("path", PATHS)
async def test_with_thinking_off_no_path_asks_for_it(tmp_path, pool, path):
    async with host_on(path, tmp_path, [Reply(text="hi")], pool) as h:
        session = await h.run("hello", timeout=90)
        assert session.status == "completed", session.error
        raw = h.model.requests[0].raw
        assert "reasoning_effort" not in raw
        assert raw.get("thinking") in (None, {"type": "disabled"})


@pytest.mark.parametrize("transport", ["auto", "litellm"])
async def test_a_model_known_to_have_no_reasoning_is_not_asked_to_reason(tmp_path, pool, transport):
    # gpt-4o refuses `reasoning_effort`; LiteLLM's map knows it, and so both paths leave it out.
    async with host_on("openai-direct", tmp_path, [Reply(text="hi")], pool, model="openai/gpt-4o", model_transport=transport, **THINKING_ON) as h:
        session = await h.run("hello", timeout=60)
        assert session.status == "completed", session.error
        assert "reasoning_effort" not in h.model.requests[0].raw


async def test_a_sampling_request_is_answered_without_thinking(tmp_path, pool):
    async with host_on("anthropic-direct", tmp_path, [], pool, **THINKING_ON) as h:
        session = await h.start("")
        client = h.host.models.sampling_model_for(session, {"max_tokens": 100})
        assert client.thinking is None and h.host.models.model_for(session).thinking == ThinkingConfig(**THINKING_ON["thinking"])
