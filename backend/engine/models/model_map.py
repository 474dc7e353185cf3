"""LiteLLM's model map: the library imported once, lazily and offline; prices and capabilities.

Every path to a model (direct or through LiteLLM) prices its calls and looks up what a model can
do here, so the answer is the same whichever path a call took.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from typing import Any

_litellm_module: Any = None


def litellm() -> Any:
    """Import LiteLLM once, lazily and offline (its import costs seconds)."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as module

        module.suppress_debug_info = True
        module.drop_params = True
        _litellm_module = module
    return _litellm_module


CLOSE_TIMEOUT = 5.0
"""Bound on closing LiteLLM's aiohttp sessions at shutdown (one stuck closing must not hold it up)."""


async def close_litellm_sessions() -> None:
    """Close the aiohttp sessions LiteLLM's cached HTTP clients opened on this event loop (the host
    calls it as it shuts down, after every run has ended).

    LiteLLM keeps its clients for the process, and their sessions open: left so, a session
    outlives its loop and is disposed of only at exit, where its finalizer prints "Exception
    ignored" noise. Only the sessions are closed, not the clients LiteLLM hands out again (its
    `close_litellm_async_clients()` closes those, and a later host of this process, as tests
    start many, would be handed a closed one): a client's transport opens a new session on the
    loop of its next request. Sessions of other loops are left to their own.
    """
    if _litellm_module is None:
        return  # never imported: no session was opened
    from aiohttp import ClientSession
    from litellm.llms.custom_httpx.aiohttp_transport import AiohttpTransport

    loop = asyncio.get_running_loop()
    for handler in list(_litellm_module.in_memory_llm_clients_cache.cache_dict.values()):
        # LiteLLM's AsyncHTTPHandler, or a provider SDK's client (AsyncOpenAI): an httpx client inside.
        client = getattr(handler, "_client", None) or getattr(handler, "client", None)
        transport = getattr(client, "_transport", None)
        session = getattr(transport, "client", None)
        if not isinstance(transport, AiohttpTransport) or not isinstance(session, ClientSession):
            continue  # plain httpx, or no session opened yet
        if session.closed or getattr(session, "_loop", None) is not loop:
            continue
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await transport.aclose()


def token_cost(model: str, input_tokens: int, output_tokens: int) -> float:
    """USD cost from LiteLLM's price map; a model it does not know costs 0."""
    prices = _linear_prices(model)
    if prices is not None:
        return input_tokens * prices[0] + output_tokens * prices[1]
    try:
        prompt, completion = litellm().cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt + completion)
    except Exception:
        return 0.0


@functools.lru_cache(maxsize=256)
def _linear_prices(model: str) -> tuple[float, float] | None:
    """A model's price per input and output token, looked up once; None when its price has tiers
    (by prompt size), which LiteLLM's own calculation then applies call by call."""
    try:
        info = litellm().get_model_info(model)
    except Exception:
        return 0.0, 0.0  # a model LiteLLM does not know costs nothing
    if any("above" in key and value for key, value in info.items() if "cost" in key):
        return None
    return float(info.get("input_cost_per_token") or 0.0), float(info.get("output_cost_per_token") or 0.0)


@functools.lru_cache(maxsize=256)
def supports_reasoning(model: str) -> bool | None:
    """Whether `model` can reason (extended thinking, `reasoning_effort`); None when the map does
    not know the model."""
    try:
        info = litellm().get_model_info(model)
    except Exception:
        return None
    return bool(info.get("supports_reasoning"))
