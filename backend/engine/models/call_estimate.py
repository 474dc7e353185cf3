"""What a model call may cost at most, known before it is made: its prompt counted, its answer at
the most it may be, both at the model's prices from LiteLLM's local price map.

A budget checked only against what was spent lets one call overshoot it by that call's whole
price (a $0.50 budget once ended at $1.20). The budget guard (backend/engine/budget.py) asks this
module instead what the call could cost, and how many answer tokens what is left can pay for.

Prompt tokens are counted with LiteLLM's counter (tiktoken, offline); tokenizers differ between
providers, so the count is raised by `PROMPT_MARGIN`. Images are not counted from their bytes
(their base64 says nothing about their tokens, and a URL would be fetched): each counts as
`IMAGE_TOKENS`, about what the largest image a provider accepts costs.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

from backend.engine.models.anthropic_direct import max_output_tokens, uses_anthropic_path
from backend.engine.models.model_map import litellm, supports_reasoning, token_cost
from backend.engine.models.openai_direct import uses_direct_path

log = logging.getLogger(__name__)

PROMPT_MARGIN = 1.1
"""The counted prompt, raised by this share: another provider's tokenizer may count more."""
IMAGE_TOKENS = 1600
"""One image part's tokens (Anthropic's ~1.15 megapixel maximum; OpenAI's high detail is less)."""
CHARS_PER_TOKEN = 3
"""When the counter fails: a generous tokens-from-characters estimate (code and JSON run ~3)."""
_IMAGE_PARTS = frozenset({"image_url", "image", "input_image"})
_PER_MILLION = 1_000_000


@dataclass(kw_only=True, frozen=True)
class CallEstimate:
    """One call to one model: its prompt, and the price of its answer per token."""

    model: str
    prompt_tokens: int
    prompt_usd: float
    output_usd_per_token: float
    max_output_tokens: int
    """What the call may answer at most as it would be sent (its `max_tokens`, else the model's limit)."""

    @property
    def most_usd(self) -> float:
        """The call's price if it answers with every token it may."""
        return self.prompt_usd + self.max_output_tokens * self.output_usd_per_token

    def answer_tokens_for(self, usd: float) -> int | None:
        """How many answer tokens `usd` pays for after the prompt (None: answers cost nothing)."""
        if self.output_usd_per_token <= 0:
            return None
        return max(math.floor((usd - self.prompt_usd) / self.output_usd_per_token), 0)


def estimate_call(
    model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int | None
) -> CallEstimate:
    """The estimate for sending `messages` and `tools` to `model` (`max_tokens`: the call's own
    limit if it sets one)."""
    prompt_tokens = math.ceil(count_prompt_tokens(model, messages, tools) * PROMPT_MARGIN)
    prompt_usd = token_cost(model, prompt_tokens, 0)
    # Priced after this prompt, for a model whose prices rise with the prompt's size.
    output_per_token = (token_cost(model, prompt_tokens, _PER_MILLION) - prompt_usd) / _PER_MILLION
    return CallEstimate(
        model=model,
        prompt_tokens=prompt_tokens,
        prompt_usd=prompt_usd,
        output_usd_per_token=max(output_per_token, 0.0),
        max_output_tokens=max_tokens or max_output_tokens(model, litellm()),
    )


def count_prompt_tokens(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """The prompt's tokens as LiteLLM counts them, images at IMAGE_TOKENS each."""
    images = 0

    def without_images(node: Any) -> Any:
        nonlocal images
        if isinstance(node, dict):
            if node.get("type") in _IMAGE_PARTS:
                images += 1
                return {"type": "text", "text": ""}
            return {key: without_images(value) for key, value in node.items()}
        if isinstance(node, list):
            return [without_images(value) for value in node]
        return node

    plain_messages = without_images(messages)
    plain_tools = without_images(tools)
    try:
        counted = int(litellm().token_counter(model=model, messages=plain_messages, tools=plain_tools or None))
    except Exception:  # a counter that cannot read this transcript must not stop the call
        log.debug("counting the prompt's tokens failed; estimating from its length", exc_info=True)
        counted = math.ceil(len(json.dumps([plain_messages, plain_tools], default=str)) / CHARS_PER_TOKEN)
    return counted + images * IMAGE_TOKENS


def output_limit_param(model: str) -> str:
    """The request parameter that caps the answer: OpenAI's reasoning models, reached directly,
    take `max_completion_tokens` and refuse `max_tokens` (LiteLLM maps it itself)."""
    if uses_direct_path(model) and not uses_anthropic_path(model) and supports_reasoning(model):
        return "max_completion_tokens"
    return "max_tokens"
