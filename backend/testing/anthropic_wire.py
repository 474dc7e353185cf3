"""Encode a scripted `Reply` as an Anthropic Messages response, whole or as the real SSE event sequence.

A tool call whose `arguments` is a str is sent verbatim as `partial_json` when streaming. A whole
(non-streaming) message must carry `input` as an object, so the str is parsed with `json.loads`;
only if it does not parse (or is not an object) is it sent as `{"__raw__": <the string>}`.
"""

from __future__ import annotations

import json

from backend.testing.script import (
    ModelRequest,
    Reply,
    ScriptedToolCall,
    new_id,
    signature_of,
    split_for_stream,
    usage_of,
)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str) -> dict:
    """Anthropic's error shape: `{"type": "error", "error": {"type", "message"}}`."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def count_tokens_body(request: ModelRequest) -> dict:
    """`POST /v1/messages/count_tokens`: an estimate, characters / 4."""
    return {"input_tokens": request.estimated_input_tokens()}


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _input_object(call: ScriptedToolCall) -> dict:
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {"__raw__": call.arguments}
    return parsed if isinstance(parsed, dict) else {"__raw__": call.arguments}


def _tool_use_ids(reply: Reply) -> list[str]:
    return [call.id or new_id("toolu_") for call in reply.tool_calls]


def _thinking_blocks(reply: Reply) -> list[dict]:
    """The reply's reasoning as the whole blocks the API returns (and wants echoed unmodified)."""
    blocks: list[dict] = []
    if reply.thinking:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": signature_of(reply.thinking)})
    if reply.redacted_thinking is not None:
        blocks.append({"type": "redacted_thinking", "data": reply.redacted_thinking})
    return blocks


def message_body(reply: Reply, request: ModelRequest) -> dict:
    """A non-streaming `message` object."""
    content: list[dict] = _thinking_blocks(reply)
    if reply.text or not reply.tool_calls:
        content.append({"type": "text", "text": reply.text})
    for tool_id, call in zip(_tool_use_ids(reply), reply.tool_calls, strict=True):
        content.append({"type": "tool_use", "id": tool_id, "name": call.name, "input": _input_object(call)})
    input_tokens, output_tokens = usage_of(reply, request)
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def stream_events(reply: Reply, request: ModelRequest) -> list[str]:
    """The SSE events of a streamed message, in the order the real API sends them: message_start,
    ping, thinking blocks first (`thinking_delta`s then one `signature_delta`; a redacted block
    whole in its start), then per block content_block_start / content_block_delta... / content_block_stop,
    message_delta (stop_reason, usage), message_stop."""
    input_tokens, output_tokens = usage_of(reply, request)
    events: list[tuple[str, dict]] = []
    start = message_body(Reply(usage=(input_tokens, 1)), request)
    start.update(content=[], stop_reason=None)
    events.append(("message_start", {"type": "message_start", "message": start}))
    events.append(("ping", {"type": "ping"}))

    index = 0
    for block in _thinking_blocks(reply):
        events += _thinking_events(index, block)
        index += 1
    if reply.text or not reply.tool_calls:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for piece in split_for_stream(reply.text):
            delta = {"type": "text_delta", "text": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for tool_id, call in zip(_tool_use_ids(reply), reply.tool_calls, strict=True):
        block = {"type": "tool_use", "id": tool_id, "name": call.name, "input": {}}
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        for piece in split_for_stream(call.arguments_json()):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events]


def _thinking_events(index: int, block: dict) -> list[tuple[str, dict]]:
    """A thinking block streamed as the API streams one: an empty start, `thinking_delta`s and a
    `signature_delta`; a redacted block arrives whole in its start."""
    if block["type"] == "redacted_thinking":
        start = {"type": "content_block_start", "index": index, "content_block": block}
        return [("content_block_start", start), ("content_block_stop", {"type": "content_block_stop", "index": index})]
    empty = {"type": "thinking", "thinking": "", "signature": ""}
    events = [("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty})]
    deltas = [{"type": "thinking_delta", "thinking": piece} for piece in split_for_stream(block["thinking"])]
    deltas.append({"type": "signature_delta", "signature": block["signature"]})
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events
