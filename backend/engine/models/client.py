"""ModelClient, the seam between the loop and a model, and its implementation.

LiteLLM covers every provider. The two wire formats that carry most traffic, OpenAI-compatible
chat completions (`openai/*`) and Anthropic's Messages API (`anthropic/*`), are streamed directly
(openai_direct.py, anthropic_direct.py) for a fraction of LiteLLM's CPU, with the same retries,
fallbacks, limits, argument repair, usage and cost (`model_transport: litellm` sends every call
through LiteLLM). The scripted model server in `backend.testing` is reached as a real provider is
(`openai/<name>` or `anthropic/<name>` + `api_base`). Transient failures (429, 5xx, timeouts, broken
connections) are retried with exponential backoff, then the fallback models are tried in order.

Two limits bound every wait on a model (see `backend.config` for the defaults and why): the
response must start (its first streamed chunk arrive) within `request_timeout` of the call, and
once streaming, no gap between chunks may exceed `stream_silence_timeout`. There is no limit on
the whole call, so a long answer that keeps streaming is never cut off.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from backend.config import MODEL_REQUEST_TIMEOUT, MODEL_STREAM_SILENCE_TIMEOUT, ThinkingConfig
from backend.domain.models import SignedThinking, ToolCallRequest, Usage
from backend.domain.redact import redact
from backend.engine.models.arguments import parse_arguments
from backend.engine.models.caching import wants_cache_control, with_cache_control
from backend.engine.models.anthropic_direct import AnthropicRequest, ChunkTranslator, max_output_tokens, uses_anthropic_path
from backend.engine.models.openai_direct import ChatRequest, TurnBuilder, open_stream, uses_direct_path
from backend.engine.models.model_map import litellm, token_cost
from backend.engine.models.thinking import for_model, request_params
from backend.engine.models.tool_names import ToolNames
from backend.engine.models.model_types import (
    ModelError,
    ModelHttpError,
    ModelTimeout,
    ModelTurn,
    ModelUnreachable,
    NoAnswer,
    OnDelta,
    OnRetry,
)

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
HTTP_TIMEOUT_MARGIN = 5.0
"""The HTTP client's own per-read timeout sits this far past our limits: a backstop that never
fires first, so a tripped limit is always reported by its name."""

T = TypeVar("T")

class ModelClient(Protocol):
    """Anything that turns a transcript and a tool list into the next assistant turn; the
    model's reasoning, if it shows any, streams to `on_thinking`."""

    async def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: OnDelta,
        on_retry: OnRetry,
        on_thinking: OnDelta | None = None,
    ) -> ModelTurn: ...


def is_retryable(exc: BaseException) -> bool:
    """429/5xx/timeouts/connection failures are worth another try; 4xx are not, and neither is a
    missing key (LiteLLM reports one as a 500 before any request is made)."""
    status = http_status(exc)
    if isinstance(status, int):
        return status in RETRYABLE_STATUS
    return isinstance(exc, (TimeoutError, ConnectionError, NoAnswer, ModelTimeout)) or type(exc).__name__ in {
        "APIConnectionError",
        "Timeout",
        "APITimeoutError",
        "ServiceUnavailableError",
        "InternalServerError",
    }


_MISSING_KEY = re.compile(
    r"missing (credentials|\w+ api key)|no (api )?key is set|api_key client option must be set", re.IGNORECASE
)
_TOO_LONG = re.compile(r"context (length|window)|too long|maximum context|too many tokens|prompt is too long", re.IGNORECASE)
_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+: )?(\w+Error: )?(\w+Exception - )?")


def http_status(exc: BaseException) -> int | None:
    """The HTTP status a failure stands for: the server's, or 401 for a key that was never sent."""
    status = getattr(exc, "status_code", None)
    if _MISSING_KEY.search(str(exc)):
        return 401
    return status if isinstance(status, int) else None


def describe_error(exc: BaseException) -> str:
    """One line about a failed call, for the person: our own errors say it already."""
    if isinstance(exc, ModelError) and str(exc).strip():
        return str(exc).strip().splitlines()[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = _LITELLM_PREFIX.sub("", text, count=1) or text
    # A key never sent is no server's answer: LiteLLM's "500" for it would mislead.
    status = None if _MISSING_KEY.search(text) else getattr(exc, "status_code", None)
    return f"HTTP {status}: {text}" if status else f"{type(exc).__name__}: {text}"


def explain_refusal(exc: BaseException, model: str) -> str | None:
    """The cause and the fix, for a failure only the person can fix (a key, a name, a request);
    None for one worth retrying or not understood."""
    status = http_status(exc)
    fix = "set it in Settings → Model (or OVERSEER_API_KEY)"
    if status == 401 and _MISSING_KEY.search(str(exc)):
        return f"No API key is set for {model} (HTTP 401): {fix}."
    if status == 401:
        return f"The model refused the API key (HTTP 401): {fix}."
    if status == 403:
        return f"The model's server refused access to {model} (HTTP 403): check the key's permissions, or {fix}."
    if status == 404:
        return f"The model {model} was not found (HTTP 404): check the model name and API base in Settings → Model."
    if status in (400, 422) and _TOO_LONG.search(str(exc)):
        return f"The conversation is too long for {model} (HTTP {status}): start a new session, or choose a model with a larger context in Settings → Model."
    if status in (400, 422):
        return f"The model's server rejected the request (HTTP {status}): check the model name and API base in Settings → Model."
    return None


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


@dataclass(kw_only=True)
class LiteLLMClient:
    """Streams completions through LiteLLM with retries and fallbacks."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    fallback_models: list[str] = field(default_factory=list)
    retries: int = 3
    backoff: float = 1.0
    request_timeout: float = MODEL_REQUEST_TIMEOUT
    """Seconds from the call to the first streamed chunk (the response has started)."""
    stream_silence_timeout: float = MODEL_STREAM_SILENCE_TIMEOUT
    """Seconds the model may send nothing once streaming has begun."""
    extra: dict[str, Any] = field(default_factory=dict)
    direct: bool = True
    """Reach `openai/*` models over httpx directly (openai_direct.py) rather than through LiteLLM."""
    thinking: ThinkingConfig | None = None
    """Extended thinking, asked of each model as backend.engine.models.thinking says; None: not asked."""

    async def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: OnDelta,
        on_retry: OnRetry,
        on_thinking: OnDelta | None = None,
    ) -> ModelTurn:
        failures: list[str] = []
        refusal: str | None = None
        # Names an API refuses (over 64 characters, a dot) go as aliases, and come back real.
        names = ToolNames.for_request(tools, messages)
        tools, messages = names.outgoing(tools, messages)
        for model in [self.model, *self.fallback_models]:
            for attempt in range(self.retries + 1):
                try:
                    return names.incoming(await self._stream_once(model, messages, tools, on_delta, on_thinking))
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    # A provider may echo the key in its error: it reaches events and logs only redacted.
                    reason = redact(describe_error(exc), [self.api_key])
                    failures.append(f"{model}: {reason}")
                    refusal = refusal or explain_refusal(exc, model)
                    if not is_retryable(exc) or attempt == self.retries:
                        log.warning("model %s failed: %s", model, reason)
                        break
                    delay = self.backoff * (2**attempt)
                    await on_retry(f"{model} failed ({reason}); retrying in {delay:.1f} s")
                    await asyncio.sleep(delay)
            if model != ([self.model, *self.fallback_models])[-1]:
                await on_retry(f"{model} is unavailable; trying the fallback model")
        if refusal:
            # One message that names the cause and the fix; what the server said follows it.
            raise ModelError(f"{refusal} ({_summary(failures)})")
        raise ModelError("The model could not answer. " + _summary(failures))

    def _endpoint(self, model: str) -> tuple[str | None, str | None]:
        """api_base and key for `model`: the primary's for a model of its provider (a gateway, a
        proxy), none for one of another provider, which then uses its own environment."""
        if _provider(model) == _provider(self.model):
            return self.api_base, self.api_key
        return None, None

    async def _stream_once(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: OnDelta,
        on_thinking: OnDelta | None,
    ) -> ModelTurn:
        messages = for_model(messages, model, self.thinking)
        if self.direct and (uses_direct_path(model) or uses_anthropic_path(model)):
            return await self._stream_direct(model, messages, tools, on_delta, on_thinking)
        lm = litellm()
        if wants_cache_control(model):
            messages, tools = with_cache_control(messages, tools)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            # Our limits below are precise and named; the HTTP client's is a per-read backstop.
            "timeout": max(self.request_timeout, self.stream_silence_timeout) + HTTP_TIMEOUT_MARGIN,
            # We retry ourselves (with events the person sees); the provider SDK must not retry too.
            "max_retries": 0,
            **request_params(model, self.thinking, via_litellm=True),
            **self.extra,
        }
        if tools:
            kwargs["tools"] = tools
        api_base, api_key = self._endpoint(model)
        if api_base:
            kwargs["api_base"] = api_base
        if api_key:
            kwargs["api_key"] = api_key
        chunks = []
        async with aclosing(self._timed_stream(lm.acompletion(**kwargs))) as stream:
            async for chunk in stream:
                chunks.append(chunk)
                choices = getattr(chunk, "choices", None) or []
                delta = getattr(choices[0], "delta", None) if choices else None
                if delta is None:
                    continue
                reasoning = getattr(delta, "reasoning_content", None)
                if reasoning and on_thinking is not None:
                    await on_thinking(reasoning)
                text = getattr(delta, "content", None)
                if text:
                    await on_delta(text)
        if not chunks:
            raise ModelError(f"{model} returned an empty stream")
        response = lm.stream_chunk_builder(chunks, messages=messages)
        turn = self._turn(model, response)
        if not turn.text and not turn.tool_calls:
            raise NoAnswer(f"{model} sent a response with no text and no tool call (empty or malformed)")
        return turn

    async def _stream_direct(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: OnDelta,
        on_thinking: OnDelta | None,
    ) -> ModelTurn:
        api_base, api_key = self._endpoint(model)
        read_timeout = max(self.request_timeout, self.stream_silence_timeout) + HTTP_TIMEOUT_MARGIN
        builder = TurnBuilder(model, on_delta, on_thinking)
        extra = {**request_params(model, self.thinking, via_litellm=False), **self.extra}
        if uses_anthropic_path(model):
            if wants_cache_control(model):
                messages, tools = with_cache_control(messages, tools)
            anthropic = AnthropicRequest(
                model=model,
                messages=messages,
                tools=tools,
                api_base=api_base,
                api_key=api_key,
                read_timeout=read_timeout,
                extra=extra,
                max_tokens_default=max_output_tokens(model, litellm()),
            )
            translator = ChunkTranslator()
            async with aclosing(self._timed_stream(open_stream(anthropic))) as stream:
                async for event in stream:
                    chunk = translator.chunk(event)
                    if chunk is not None:
                        await builder.feed(chunk)
        else:
            request = ChatRequest(
                model=model,
                messages=messages,
                tools=tools,
                api_base=api_base,
                api_key=api_key,
                read_timeout=read_timeout,
                extra=extra,
            )
            async with aclosing(self._timed_stream(open_stream(request))) as stream:
                async for chunk in stream:
                    await builder.feed(chunk)
        turn = builder.turn(messages)
        turn.usage.cost_usd = token_cost(model, turn.usage.input_tokens, turn.usage.output_tokens)
        return turn

    async def _timed_stream(self, call: Awaitable[Any]) -> AsyncIterator[Any]:
        """The chunks of the stream `call` opens: the first within `request_timeout` of the call,
        each next within `stream_silence_timeout` of our asking for it. The stream is closed
        however this ends, so a stalled connection is not left open."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.request_timeout
        late = ModelTimeout.not_started(self.request_timeout)
        stream = await _within(call, deadline, late)
        if stream is None:
            # LiteLLM answers a 422 by retrying without the parameters it names, and when those
            # retries run out returns None instead of raising: the server refused the request.
            raise ModelHttpError(422, "the model's server could not process the request")
        try:
            iterator = aiter(stream)
            while (chunk := await _within(anext(iterator, _END), deadline, late)) is not _END:
                yield chunk
                # Measured from when we wait again, so our own handling of a chunk is not silence.
                deadline = loop.time() + self.stream_silence_timeout
                late = ModelTimeout.went_silent(self.stream_silence_timeout)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    def _turn(self, model: str, response: Any) -> ModelTurn:
        message = response.choices[0].message
        calls = []
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            raw = call.function.arguments or ""
            arguments, error = parse_arguments(raw, tool=call.function.name)
            calls.append(
                ToolCallRequest(
                    id=call.id or f"call_{index}",
                    name=call.function.name or "",
                    arguments=arguments,
                    raw_arguments=raw,
                    argument_error=error,
                )
            )
        usage = getattr(response, "usage", None)
        input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return ModelTurn(
            text=message.content or "",
            tool_calls=calls,
            usage=Usage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=token_cost(model, input_tokens, output_tokens),
            ),
            model=model,
            thinking=getattr(message, "reasoning_content", None) or "",
            thinking_blocks=[
                SignedThinking.model_validate(dict(block)) for block in getattr(message, "thinking_blocks", None) or []
            ],
        )


def _summary(failures: list[str]) -> str:
    """The last three distinct failures; a run of the same one is said once, with its count."""
    runs: list[tuple[str, int]] = []
    for failure in failures:
        if runs and runs[-1][0] == failure:
            runs[-1] = (failure, runs[-1][1] + 1)
        else:
            runs.append((failure, 1))
    return "; ".join(text if count == 1 else f"{text} ({count} attempts)" for text, count in runs[-3:])


_END: Any = object()


async def _within(step: Awaitable[T], deadline: float, late: ModelTimeout) -> T:
    """`step`'s result, or `late` if it is not done by `deadline` (event-loop time)."""
    try:
        async with asyncio.timeout_at(deadline) as limit:
            return await step
    except TimeoutError:
        if limit.expired():
            raise late from None
        raise  # a timeout of the client's own: handled like any other
