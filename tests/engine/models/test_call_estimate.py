"""The estimate of a model call before it is made (backend/engine/models/call_estimate.py): the
prompt counted, the answer at its most, at the model's prices from LiteLLM's local map."""

from __future__ import annotations

from backend.engine.models.call_estimate import IMAGE_TOKENS, PROMPT_MARGIN, count_prompt_tokens, estimate_call, output_limit_param

MODEL = "openai/gpt-4o"  # $2.50 / $10 per million tokens in / out, 16,384 answer tokens at most


def test_a_longer_prompt_is_counted_as_more_tokens_and_costs_more():
    short = estimate_call(MODEL, [{"role": "user", "content": "hi"}], [], max_tokens=None)
    long = estimate_call(MODEL, [{"role": "user", "content": "hello there " * 1000}], [], max_tokens=None)
    assert long.prompt_tokens > short.prompt_tokens + 1000
    assert long.prompt_usd > short.prompt_usd > 0


def test_the_answer_is_priced_at_its_most_the_models_limit_or_the_calls_own():
    messages = [{"role": "user", "content": "hi"}]
    free = estimate_call(MODEL, messages, [], max_tokens=None)
    assert free.max_output_tokens == 16_384
    assert free.most_usd == free.prompt_usd + 16_384 * free.output_usd_per_token
    assert abs(free.output_usd_per_token - 10 / 1_000_000) < 1e-12
    assert estimate_call(MODEL, messages, [], max_tokens=100).max_output_tokens == 100


def test_what_is_left_pays_for_answer_tokens_after_the_prompt():
    estimate = estimate_call(MODEL, [{"role": "user", "content": "hi"}], [], max_tokens=None)
    tokens = estimate.answer_tokens_for(0.01)
    assert tokens is not None and tokens * estimate.output_usd_per_token <= 0.01 - estimate.prompt_usd + 1e-12
    assert estimate.answer_tokens_for(0.0) == 0


def test_a_model_the_price_map_does_not_know_answers_for_nothing():
    estimate = estimate_call("openai/not-a-real-model", [{"role": "user", "content": "hi"}], [], max_tokens=None)
    assert estimate.answer_tokens_for(0.01) is None and estimate.most_usd == 0


def test_an_image_counts_as_a_fixed_number_of_tokens_not_its_base64():
    text = {"type": "text", "text": "look"}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400_000}}
    without = count_prompt_tokens(MODEL, [{"role": "user", "content": [text]}], [])
    with_image = count_prompt_tokens(MODEL, [{"role": "user", "content": [text, image]}], [])
    assert with_image - without == IMAGE_TOKENS


def test_tools_count_toward_the_prompt_with_a_margin_for_other_tokenizers():
    tool = {"type": "function", "function": {"name": "read_file", "description": "Read a file " * 50, "parameters": {"type": "object"}}}
    messages = [{"role": "user", "content": "hi"}]
    bare = count_prompt_tokens(MODEL, messages, [])
    assert count_prompt_tokens(MODEL, messages, [tool]) > bare + 50
    assert estimate_call(MODEL, messages, [], max_tokens=None).prompt_tokens >= bare * PROMPT_MARGIN


def test_openai_reasoning_models_reached_directly_take_max_completion_tokens():
    assert output_limit_param("openai/o3-mini") == "max_completion_tokens"
    assert output_limit_param("openai/gpt-4o") == "max_tokens"
    assert output_limit_param("anthropic/claude-sonnet-4-20250514") == "max_tokens"
