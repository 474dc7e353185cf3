"""OpenAI-compatible chat completions streamed over aiohttp: the direct path for `openai/*` models.

LiteLLM spends ~13.5 ms of CPU on one streamed call here (a wrapper object per chunk, a rebuild
of the whole response, cost and logging hooks run in worker threads); this path reads the same
server-sent events with one JSON parse per chunk and costs a few. It keeps the LiteLLM path's
contract, so the loop cannot tell them apart: the same request (the model name without its
`openai/` prefix, `stream_options.include_usage`, the caller's extra parameters), text deltas as
they arrive, tool calls rebuilt by index with their arguments repaired by `parse_arguments`,
usage from the final chunk, and failures as ModelHttpError (with the status that decides a
retry), ModelUnreachable, or NoAnswer for a 200 that carried nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp

from backend.domain.models import SignedThinking, ToolCallRequest, Usage
from backend.engine.models.arguments import parse_arguments
from backend.engine.models.model_types import ModelError, ModelHttpError, ModelTurn, ModelUnreachable, NoAnswer, OnDelta

DEFAULT_BASE = "https://api.openai.com/v1"
CHARS_PER_TOKEN = 4
"""For a server that reports no usage: a rough count, so tokens are never silently zero."""

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = weakref.WeakKeyDictionary()


def uses_direct_path(model: str) -> bool:
    return model.startswith("openai/")


def shared_client() -> aiohttp.ClientSession:
    """One pooled HTTP client per event loop: connections to the model's server are reused.

    aiohttp rather than httpx: its C parser reads a stream for about half httpx's CPU."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.closed:
        connector = aiohttp.TCPConnector(limit=1000, limit_per_host=0, enable_cleanup_closed=True)
        client = _clients[loop] = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None))
    return client


@dataclass(kw_only=True)
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api_base: str | None
    api_key: str | None
    read_timeout: float
    extra: dict[str, Any] = field(default_factory=dict)

    def body(self) -> bytes:
        body: dict[str, Any] = {
            "model": self.model.removeprefix("openai/"),
            "messages": self.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            **self.extra,
        }
        encoded = json.dumps(body, ensure_ascii=False)
        if self.tools:
            encoded = f'{encoded[:-1]}, "tools": {_tools_json(self.tools)}}}'
        return encoded.encode()

    def headers(self) -> dict[str, str]:
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @property
    def url(self) -> str:
        return (self.api_base or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE).rstrip("/") + "/chat/completions"


_encoded_tools: OrderedDict[tuple[Any, ...], tuple[list[dict[str, Any]], str]] = OrderedDict()
_ENCODED_TOOLS_KEPT = 32


def _tools_json(tools: list[dict[str, Any]]) -> str:
    """The tool list as JSON, encoded once per distinct list: it is the bulk of every request and
    the same turn after turn. Keyed by each schema's identity (the pool keeps a server's schemas
    until its tools change), names and descriptions; the entry holds the list, so no identity
    can be reused by another object while it is cached."""
    key = tuple((t["function"]["name"], t["function"].get("description"), id(t["function"].get("parameters"))) for t in tools)
    hit = _encoded_tools.get(key)
    if hit is not None:
        _encoded_tools.move_to_end(key)
        return hit[1]
    encoded = json.dumps(tools, ensure_ascii=False)
    _encoded_tools[key] = (tools, encoded)
    if len(_encoded_tools) > _ENCODED_TOOLS_KEPT:
        _encoded_tools.popitem(last=False)
    return encoded


class ChatStream:
    """The decoded chunks of one streamed response (or the one chunk of a non-streamed answer)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[dict[str, Any]]:
        try:
            if self._response.headers.get("content-type", "").startswith("application/json"):
                # A server that ignored `stream`: its whole answer is one chunk.
                yield _as_chunk(json.loads(await self._response.read()))
                return
            async for raw in _lines(self._response.content):
                if not raw.startswith(b"data:"):
                    continue
                data = raw[5:].strip().decode("utf-8", errors="replace")
                if data == "[DONE]":
                    return
                try:
                    yield json.loads(data)
                except json.JSONDecodeError:
                    raise NoAnswer(f"the model's server sent a malformed stream event: {data[:200]!r}") from None
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            if isinstance(exc, asyncio.TimeoutError) and not isinstance(exc, aiohttp.ClientError):
                raise  # our own limits (model.py's _within) name themselves
            raise ModelUnreachable(f"the connection to the model broke mid-answer: {type(exc).__name__}") from exc

    async def aclose(self) -> None:
        self._response.release()


class StreamRequest(Protocol):
    """What `open_stream` sends: the OpenAI request here, or anthropic_direct's."""

    read_timeout: float

    @property
    def url(self) -> str: ...

    def headers(self) -> dict[str, str]: ...

    def body(self) -> bytes: ...


async def open_stream(request: StreamRequest) -> ChatStream:
    """Send the request; the stream once its headers say 200, else the error they say."""
    client = shared_client()
    # A backstop past our own limits (model.py), so a tripped limit is reported by its name.
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=request.read_timeout, sock_read=request.read_timeout)
    try:
        response = await client.post(request.url, data=request.body(), headers=request.headers(), timeout=timeout)
    except aiohttp.ClientError as exc:
        raise ModelUnreachable(f"cannot reach the model at {request.url}: {type(exc).__name__}: {exc}") from exc
    if response.status >= 400:
        try:
            body = (await response.read()).decode("utf-8", errors="replace")
        finally:
            response.release()
        raise ModelHttpError(response.status, _error_message(body))
    return ChatStream(response)


async def _lines(content: aiohttp.StreamReader) -> AsyncIterator[bytes]:
    """The stream's lines, however long: aiohttp's own line reader refuses lines over 64 KiB,
    and one event may carry a whole tool call's arguments."""
    pending = b""
    async for block in content.iter_any():
        pending += block
        *whole, pending = pending.split(b"\n")
        for line in whole:
            yield line
    if pending:
        yield pending


async def close_shared_client() -> None:
    """Close this event loop's HTTP client (the host calls it as it shuts down)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.close()


def _error_message(body: str) -> str:
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return body.strip()[:500] or "(no body)"


def _as_chunk(completion: dict[str, Any]) -> dict[str, Any]:
    """A whole (non-streamed) completion in the shape of one stream chunk."""
    choices = [
        {"index": c.get("index", 0), "delta": c.get("message") or {}, "finish_reason": c.get("finish_reason")}
        for c in completion.get("choices") or []
    ]
    return {**completion, "choices": choices}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class TurnBuilder:
    """Rebuilds one assistant turn from its chunks, passing text and reasoning on as they arrive.

    Reasoning comes as `reasoning_content` deltas (DeepSeek, vLLM, LiteLLM's proxy; `reasoning` on
    some servers) and, from anthropic_direct's translator, as whole signed `thinking_blocks`."""

    def __init__(self, model: str, on_delta: OnDelta, on_thinking: OnDelta | None = None) -> None:
        self.model = model
        self._on_delta = on_delta
        self._on_thinking = on_thinking
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._signed: list[SignedThinking] = []
        self._calls: dict[int, _Call] = {}
        self._usage: dict[str, Any] | None = None
        self.chunks = 0

    async def feed(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        if chunk.get("error"):
            raise ModelError(f"the model's server reported an error mid-stream: {_error_message(json.dumps(chunk))}")
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                self._thinking.append(reasoning)
                if self._on_thinking is not None:
                    await self._on_thinking(reasoning)
            for block in delta.get("thinking_blocks") or []:
                self._signed.append(SignedThinking.model_validate(block))
            text = delta.get("content")
            if text:
                self._text.append(text)
                await self._on_delta(text)
            for part in delta.get("tool_calls") or []:
                call = self._calls.setdefault(part.get("index", len(self._calls)), _Call())
                call.id = part.get("id") or call.id
                function = part.get("function") or {}
                call.name += function.get("name") or ""
                if function.get("arguments"):
                    call.arguments.append(function["arguments"])

    def turn(self, messages: list[dict[str, Any]]) -> ModelTurn:
        """The whole turn; usage as the server reported it, else estimated from the characters."""
        text = "".join(self._text)
        calls = []
        for index, (_, call) in enumerate(sorted(self._calls.items())):
            raw = "".join(call.arguments)
            arguments, error = parse_arguments(raw, tool=call.name)
            calls.append(
                ToolCallRequest(
                    id=call.id or f"call_{index}",
                    name=call.name,
                    arguments=arguments,
                    raw_arguments=raw,
                    argument_error=error,
                )
            )
        if not text and not calls:
            raise NoAnswer(f"{self.model} sent a response with no text and no tool call (empty or malformed)")
        if self._usage is not None:
            input_tokens = int(self._usage.get("prompt_tokens") or 0)
            output_tokens = int(self._usage.get("completion_tokens") or 0)
        else:
            input_tokens = len(json.dumps(messages)) // CHARS_PER_TOKEN
            output_tokens = (len(text) + sum(len(c.raw_arguments) for c in calls)) // CHARS_PER_TOKEN
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=usage,
            model=self.model,
            thinking="".join(self._thinking),
            thinking_blocks=self._signed,
        )
