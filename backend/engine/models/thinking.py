"""Extended thinking: how each path to a model asks for it, and what of it goes back to the model.

Asking. With `thinking.enabled`, `anthropic/*` models get Anthropic's own parameter,
`thinking={"type": "enabled", "budget_tokens": N}` (on the direct path and through LiteLLM alike);
every other model gets `reasoning_effort`, the budget mapped to low / medium / high as LiteLLM maps
the other way (1024 / 2048 / 4096 tokens). OpenAI-compatible servers that reason on their own
(DeepSeek, vLLM, Ollama's reasoning models) stream `reasoning_content` whatever is asked; the effort
only tunes the ones that take it. A model LiteLLM's map knows to have no reasoning is asked
nothing, since its API would refuse the parameter; one the map does not know is asked as the
person said (LiteLLM would otherwise drop the parameter for it).

Sending back. Reasoning is for the person: it is stored with the assistant message and never
sent to the model again, with one exception the Messages API imposes. With thinking enabled, an
assistant turn that called tools must come back with its signed thinking blocks, unmodified, until
the model answers it (its tool loop goes on). So `to_wire` (backend.engine.loop) puts a message's
signed blocks on it only while its turn is open (no plain answer after it), `for_model` passes them
only to an Anthropic model with thinking on, and once the turn is answered they are never sent.
OpenAI-style `reasoning_content` is never sent at all (DeepSeek refuses a request that carries it).
"""

from __future__ import annotations

from typing import Any, Literal

from backend.config import ThinkingConfig
from backend.domain.models import Message
from backend.engine.models.model_map import supports_reasoning

Effort = Literal["low", "medium", "high"]
SIGNED = "thinking_blocks"
"""The key an assistant message carries its signed blocks under in OpenAI-shaped messages (as
LiteLLM names it, so its Anthropic adapter turns them back into blocks)."""


def effort_for(budget_tokens: int) -> Effort:
    """The `reasoning_effort` a thinking budget stands for."""
    if budget_tokens < 2048:
        return "low"
    if budget_tokens < 4096:
        return "medium"
    return "high"


def is_anthropic(model: str) -> bool:
    return model.startswith("anthropic/")


def wants_thinking(model: str, config: ThinkingConfig | None) -> bool:
    """Whether a call to `model` asks for thinking."""
    return config is not None and config.enabled and supports_reasoning(model) is not False


def request_params(model: str, config: ThinkingConfig | None, *, via_litellm: bool) -> dict[str, Any]:
    """The request parameters that ask `model` to think (none when it should not)."""
    if config is None or not wants_thinking(model, config):
        return {}
    if is_anthropic(model):
        name, params = "thinking", {"thinking": {"type": "enabled", "budget_tokens": config.budget_tokens}}
    else:
        name, params = "reasoning_effort", {"reasoning_effort": effort_for(config.budget_tokens)}
    if via_litellm and supports_reasoning(model) is None:
        # LiteLLM drops a parameter it does not know the model takes (drop_params): the person
        # asked for it, so it goes to the model, whose API answers for itself.
        params["allowed_openai_params"] = [name]
    return params


def open_turn_from(history: list[Message]) -> int:
    """The idx from which assistant messages belong to the turn still open: the one after the
    model's last plain answer (an assistant message without tool calls)."""
    answered = [m.idx for m in history if m.role == "assistant" and not m.tool_calls]
    return answered[-1] + 1 if answered else 0


def for_model(messages: list[dict[str, Any]], model: str, config: ThinkingConfig | None) -> list[dict[str, Any]]:
    """`messages` for one call to `model`: signed blocks stay only for an Anthropic model with
    thinking on (which needs them); for any other they are taken off (an OpenAI-compatible
    server would get them as an unknown field, and LiteLLM passes that on)."""
    if not any(SIGNED in m for m in messages):
        return messages
    if is_anthropic(model) and wants_thinking(model, config):
        return messages
    return [{k: v for k, v in m.items() if k != SIGNED} if SIGNED in m else m for m in messages]
