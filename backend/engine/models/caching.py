"""Prompt caching: mark the stable prefix (system prompt, tool list) for providers that need it.

Anthropic caches only what a request marks with `cache_control`; LiteLLM passes the marks on
(also for Claude on Bedrock and Vertex). OpenAI-style providers cache on their own, so their
requests are left as they are.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL = {"type": "ephemeral"}


def wants_cache_control(model: str) -> bool:
    provider, _, name = model.partition("/")
    return provider == "anthropic" or "claude" in (name or provider).lower()


def with_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies with the system prompt and the last tool marked; the inputs are not changed."""
    marked = []
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str) and message["content"]:
            message = {
                **message,
                "content": [{"type": "text", "text": message["content"], "cache_control": EPHEMERAL}],
            }
        marked.append(message)
    if tools:
        tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    return marked, tools
