"""The Anthropic Messages API streamed over aiohttp: the direct path for `anthropic/*` models.

The loop speaks OpenAI's chat format (what LiteLLM takes for every provider); this module
translates a request into the Messages API as LiteLLM does (system prompt apart, tool calls as
`tool_use` blocks, tool results as `tool_result` blocks in a user turn, images as base64 or URL
sources, consecutive turns of one role merged, `cache_control` marks kept, `max_tokens` the
model's own limit when the caller sets none) and the streamed events back into OpenAI-shaped
chunks, so `openai_direct.TurnBuilder` rebuilds the turn exactly as on the other paths.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from backend.engine.models.model_types import ModelError, ModelHttpError

DEFAULT_BASE = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
EVENT_ERROR_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500, "timeout_error": 504}
"""An error event mid-stream, as the HTTP status it would have had (which decides a retry)."""


def uses_anthropic_path(model: str) -> bool:
    return model.startswith("anthropic/")


@dataclass(kw_only=True)
class AnthropicRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api_base: str | None
    api_key: str | None
    read_timeout: float
    extra: dict[str, Any] = field(default_factory=dict)
    max_tokens_default: int = DEFAULT_MAX_TOKENS

    def body(self) -> bytes:
        system, messages = to_anthropic_messages(self.messages)
        extra = dict(self.extra)
        body: dict[str, Any] = {
            "model": self.model.removeprefix("anthropic/"),
            "max_tokens": extra.pop("max_tokens", None) or self.max_tokens_default,
            "messages": messages,
            "stream": True,
        }
        thinking = extra.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") == "enabled":
            # The budget is part of max_tokens and must be below it (as LiteLLM makes it).
            budget = int(thinking.get("budget_tokens") or 0)
            if body["max_tokens"] <= budget:
                body["max_tokens"] = budget + DEFAULT_MAX_TOKENS
        if system:
            body["system"] = system
        if self.tools:
            body["tools"] = [to_anthropic_tool(tool) for tool in self.tools]
        if "stop" in extra:
            stop = extra.pop("stop")
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        body.update(extra)
        return json.dumps(body, ensure_ascii=False).encode()

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        key = self.api_key or os.environ.get("ANTHROPIC_API_KEY")
        if key:
            headers["x-api-key"] = key
        return headers

    @property
    def url(self) -> str:
        base = (self.api_base or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE).rstrip("/")
        if base.endswith("/v1/messages"):
            return base
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def to_anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    converted = {
        "name": function["name"],
        "description": function.get("description") or "",
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if "cache_control" in tool:
        converted["cache_control"] = tool["cache_control"]
    return converted


def to_anthropic_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, turns) for the Messages API from OpenAI-format messages."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_blocks(message.get("content")))
        elif role == "user":
            add("user", _blocks(message.get("content")))
        elif role == "assistant":
            # Signed thinking leads the turn it belongs to, unmodified (the API checks both).
            blocks = [dict(block) for block in message.get("thinking_blocks") or []]
            blocks += _blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append(
                    {"type": "tool_use", "id": call.get("id"), "name": function.get("name"), "input": _input(function)}
                )
            add("assistant", blocks)
        elif role == "tool":
            content = message.get("content")
            result = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": content if isinstance(content, str) else _blocks(content),
            }
            add("user", [result])
    return system, turns


def _input(function: dict[str, Any]) -> dict[str, Any]:
    raw = function.get("arguments") or "{}"
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {"raw": raw}  # as LiteLLM sends arguments that are not JSON
    return parsed if isinstance(parsed, dict) else {"raw": raw}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Content blocks from an OpenAI content value (a string, or a list of parts); empty text is
    left out, since the Messages API refuses empty text blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            if part.get("text"):
                block = {"type": "text", "text": part["text"]}
                if "cache_control" in part:
                    block["cache_control"] = part["cache_control"]
                blocks.append(block)
        elif kind == "image_url":
            url = part["image_url"]["url"] if isinstance(part.get("image_url"), dict) else str(part.get("image_url"))
            blocks.append({"type": "image", "source": _image_source(url)})
        else:
            blocks.append(part)  # already an Anthropic block (a document, a tool result, ...)
    return blocks


def _image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        header, data = url.split(",", 1)
        return {"type": "base64", "media_type": header[5:].split(";", 1)[0], "data": data}
    return {"type": "url", "url": url}


class ChunkTranslator:
    """Anthropic stream events in, OpenAI-shaped chunks out (for openai_direct.TurnBuilder)."""

    def __init__(self) -> None:
        self._tool_index: dict[int, int] = {}
        self._thinking: dict[int, dict[str, str]] = {}
        """Thinking blocks being streamed, by index: passed on whole once signed and stopped."""
        self._usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}

    def chunk(self, event: dict[str, Any]) -> dict[str, Any] | None:
        kind = event.get("type")
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage") or {}
            self._usage["prompt_tokens"] = sum(
                int(usage.get(key) or 0)
                for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            self._usage["completion_tokens"] = int(usage.get("output_tokens") or 0)
            return {"usage": dict(self._usage)}
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                index = self._tool_index.setdefault(event.get("index", 0), len(self._tool_index))
                call = {"index": index, "id": block.get("id"), "function": {"name": block.get("name") or ""}}
                return _delta({"tool_calls": [call]})
            if block.get("type") == "text" and block.get("text"):
                return _delta({"content": block["text"]})
            if block.get("type") == "thinking":
                self._thinking[event.get("index", 0)] = {"type": "thinking", "thinking": "", "signature": ""}
                return self._thought(event.get("index", 0), block.get("thinking") or "", block.get("signature") or "")
            if block.get("type") == "redacted_thinking":
                self._thinking[event.get("index", 0)] = {"type": "redacted_thinking", "data": block.get("data") or ""}
            return None
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                return _delta({"content": delta.get("text") or ""})
            if delta.get("type") == "input_json_delta":
                index = self._tool_index.get(event.get("index", 0))
                if index is None:
                    return None
                return _delta({"tool_calls": [{"index": index, "function": {"arguments": delta.get("partial_json") or ""}}]})
            if delta.get("type") == "thinking_delta":
                return self._thought(event.get("index", 0), delta.get("thinking") or "", "")
            if delta.get("type") == "signature_delta":
                return self._thought(event.get("index", 0), "", delta.get("signature") or "")
            return None
        if kind == "content_block_stop":
            block = self._thinking.pop(event.get("index", 0), None)
            return _delta({"thinking_blocks": [block]}) if block is not None else None
        if kind == "message_delta":
            usage = event.get("usage") or {}
            if "output_tokens" in usage:
                self._usage["completion_tokens"] = int(usage["output_tokens"] or 0)
            return {"usage": dict(self._usage)}
        if kind == "error":
            error = event.get("error") or {}
            message = str(error.get("message") or error)
            status = EVENT_ERROR_STATUS.get(str(error.get("type")))
            if status is not None:
                raise ModelHttpError(status, message)
            raise ModelError(f"the model reported an error mid-stream: {message}")
        return None


    def _thought(self, index: int, text: str, signature: str) -> dict[str, Any] | None:
        """Add to the thinking block at `index`; its new text, if any, as a reasoning delta."""
        block = self._thinking.get(index)
        if block is None or block["type"] != "thinking":
            return None
        block["thinking"] += text
        block["signature"] += signature
        return _delta({"reasoning_content": text}) if text else None


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


@functools.lru_cache(maxsize=128)
def max_output_tokens(model: str, litellm_module: Any) -> int:
    """The model's own output limit (what LiteLLM sends when the caller sets none)."""
    try:
        return int(litellm_module.get_max_tokens(model) or DEFAULT_MAX_TOKENS)
    except Exception:
        return DEFAULT_MAX_TOKENS
