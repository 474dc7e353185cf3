"""CPU per streamed model call on each path: the direct one and LiteLLM, for both wire formats.

The scripted model server runs in another process; only the client's CPU (this process,
getrusage) is counted. Prints JSON: ms of CPU per call for openai/* and anthropic/* models,
direct and through LiteLLM.

    python bench/model_paths.py [-n 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.engine.loop import tool_schemas  # noqa: E402
from backend.engine.models.client import LiteLLMClient  # noqa: E402
from backend.domain.tools import ToolInfo  # noqa: E402

MESSAGES = [{"role": "system", "content": "You are Overseer."}, {"role": "user", "content": "hi"}]
TOOLS = tool_schemas([ToolInfo(name=f"mcp__file__t{i}", server="file", tool=f"t{i}", description="a tool") for i in range(20)])


def serve(bases: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from backend.testing import Reply, ScriptedModelServer

    server = ScriptedModelServer(lambda r: Reply(text="hello there, a streamed answer of a few words")).start()
    bases.put((server.openai_base, server.anthropic_base))
    while True:
        time.sleep(3600)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def ignore(_: str) -> None:
    return None


async def per_call(client: LiteLLMClient, n: int) -> float:
    for _ in range(30):  # warm: imports, connections, caches
        await client.complete(messages=MESSAGES, tools=TOOLS, on_delta=ignore, on_retry=ignore)
    start = cpu()
    for _ in range(n):
        await client.complete(messages=MESSAGES, tools=TOOLS, on_delta=ignore, on_retry=ignore)
    return round((cpu() - start) * 1000 / n, 2)


async def run(openai_base: str, anthropic_base: str, n: int) -> dict:
    results = {}
    for name, model, base in (("openai", "openai/scripted", openai_base), ("anthropic", "anthropic/scripted", anthropic_base)):
        for direct in (True, False):
            client = LiteLLMClient(model=model, api_base=base, api_key="k", retries=0, direct=direct)
            results[f"{name}_{'direct' if direct else 'litellm'}_cpu_ms_per_call"] = await per_call(client, n)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=300)
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    bases: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    model = ctx.Process(target=serve, args=(bases,), daemon=True)
    model.start()
    try:
        openai_base, anthropic_base = bases.get(timeout=60)
        results = asyncio.run(run(openai_base, anthropic_base, args.n))
    finally:
        model.terminate()
        model.join(10)
    print(json.dumps({"benchmark": "model_paths", "calls": args.n, **results}, indent=2))


if __name__ == "__main__":
    main()
