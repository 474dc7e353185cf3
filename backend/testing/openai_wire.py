"""Encode a scripted `Reply` as an OpenAI Chat Completions response, whole or as an SSE stream."""

from __future__ import annotations

import json
import time

from backend.testing.script import ModelRequest, Reply, new_id, split_for_stream, usage_of

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def error_body(status: int, message: str) -> dict:
    """OpenAI's error shape: `{"error": {"message", "type", "code"}}`."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def models_body(model_ids: list[str]) -> dict:
    """`GET /v1/models`, with the fields of both APIs' listings so either client can read it."""
    data = [
        {
            "id": model_id,
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "2025-01-01T00:00:00Z",
            "display_name": model_id,
            "owned_by": "overseer-scripted",
        }
        for model_id in model_ids
    ]
    return {
        "object": "list",
        "data": data,
        "has_more": False,
        "first_id": model_ids[0] if model_ids else None,
        "last_id": model_ids[-1] if model_ids else None,
    }


def _tool_call_ids(reply: Reply) -> list[str]:
    return [call.id or new_id("call_") for call in reply.tool_calls]


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(reply: Reply, request: ModelRequest) -> dict:
    prompt, completion = usage_of(reply, request)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_body(reply: Reply, request: ModelRequest) -> dict:
    """A non-streaming `chat.completion` object."""
    message: dict = {"role": "assistant", "content": reply.text or None}
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for call_id, call in zip(_tool_call_ids(reply), reply.tool_calls, strict=True)
        ]
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": _finish_reason(reply), "logprobs": None}
        ],
        "usage": _usage(reply, request),
    }


def stream_events(reply: Reply, request: ModelRequest) -> list[str]:
    """The SSE lines of a streamed completion: a role delta, `reasoning_content` deltas, content deltas in pieces, tool-call
    deltas (name first, then arguments in 2+ pieces), the finish chunk, a usage chunk when the
    request asked for `stream_options.include_usage`, then `[DONE]`."""
    completion_id = new_id("chatcmpl-")
    created = int(time.time())

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": request.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    # Reasoning first, as DeepSeek, vLLM and LiteLLM's proxy stream it.
    chunks += [chunk({"reasoning_content": piece}) for piece in split_for_stream(reply.thinking)]
    chunks += [chunk({"content": piece}) for piece in split_for_stream(reply.text)]
    for index, (call_id, call) in enumerate(zip(_tool_call_ids(reply), reply.tool_calls, strict=True)):
        head = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        for piece in split_for_stream(call.arguments_json()):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, _finish_reason(reply)))
    if (request.raw.get("stream_options") or {}).get("include_usage"):
        usage_chunk = chunk({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = _usage(reply, request)
        chunks.append(usage_chunk)
    return [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
