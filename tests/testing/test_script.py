"""The reply model: how a received request is normalised and read by a script."""

from __future__ import annotations

import json

from backend.testing import anthropic_wire
from backend.testing.script import ModelRequest, Reply, ScriptedToolCall, split_for_stream

OPENAI_TURNS = [
    {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
    {"role": "user", "content": "first prompt"},
    {
        "role": "assistant",
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "a", "content": "old result"},
    {"role": "user", "content": "second prompt"},
    {"role": "assistant", "tool_calls": []},
    {"role": "tool", "tool_call_id": "b", "content": "result b"},
    {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "result c"}]},
]

ANTHROPIC_TURNS = [
    {"role": "user", "content": "prompt"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "t", "input": {}}]},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "b", "content": "result b"},
            {
                "type": "tool_result",
                "tool_use_id": "c",
                "content": [{"type": "text", "text": "result c"}],
                "is_error": True,
            },
            {"type": "text", "text": "<system-reminder>noise</system-reminder>"},
        ],
    },
]


def test_openai_request_reads_system_tool_names_and_the_trailing_tool_messages():
    request = ModelRequest.from_body(
        "openai",
        {"model": "m", "messages": OPENAI_TURNS, "tools": [{"type": "function", "function": {"name": "t"}}]},
    )

    assert request.system == "Be brief."
    assert request.tool_names == ["t"]
    assert request.stream is False
    assert request.last_tool_results() == ["result b", "result c"]
    assert [r.text for r in request.tool_results()] == ["result b", "result c"]
    assert [r.text for r in request.tool_results(since_prompt=False)] == [
        "old result",
        "result b",
        "result c",
    ]
    assert request.last_prompt() == "second prompt"


def test_anthropic_request_reads_list_system_and_the_tool_result_blocks_of_the_last_user_turn():
    request = ModelRequest.from_body(
        "anthropic",
        {
            "model": "m",
            "stream": True,
            "system": [{"type": "text", "text": "You are"}, {"type": "text", "text": "scripted."}],
            "messages": ANTHROPIC_TURNS,
            "tools": [{"name": "t", "input_schema": {}}],
        },
    )

    assert request.system == "You are\nscripted."
    assert request.tool_names == ["t"]
    assert request.last_tool_results() == ["result b", "result c"]
    assert [r.is_error for r in request.tool_results()] == [False, True]
    assert [r.tool_call_id for r in request.tool_results()] == ["b", "c"]


def test_a_conversation_ending_in_a_prompt_has_no_last_tool_results():
    request = ModelRequest.from_body("openai", {"model": "m", "messages": OPENAI_TURNS[:5]})

    assert request.last_tool_results() == []
    assert request.tool_results() == []


def test_streamed_text_is_cut_into_two_or_more_pieces_that_join_back():
    for text in ["{}", "abc", "hello world, this is a longer text"]:
        pieces = split_for_stream(text)
        assert len(pieces) >= 2 and "".join(pieces) == text and all(pieces)
    assert split_for_stream("") == []
    assert split_for_stream("x") == ["x"]


def test_whole_anthropic_message_parses_string_arguments_when_they_are_json():
    request = ModelRequest.from_body("anthropic", {"model": "m", "messages": []})
    reply = Reply(tool_calls=[ScriptedToolCall(name="t", arguments='{"a": 1}', id="toolu_1")])

    body = anthropic_wire.message_body(reply, request)

    assert body["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"a": 1}}]


def test_streamed_anthropic_string_arguments_are_sent_verbatim_as_partial_json():
    request = ModelRequest.from_body("anthropic", {"model": "m", "messages": [], "stream": True})
    reply = Reply(tool_calls=[ScriptedToolCall(name="t", arguments='{"a": ')])

    events = anthropic_wire.stream_events(reply, request)

    datas = [json.loads(e.split("data: ", 1)[1]) for e in events]
    partial = "".join(d["delta"]["partial_json"] for d in datas if d["type"] == "content_block_delta")
    assert partial == '{"a": '
    assert [d["type"] for d in datas][0] == "message_start" and datas[-1]["type"] == "message_stop"
