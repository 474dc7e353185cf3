"""What the engine adds to a tool call: policy, persistence and events, over a raw MCP call.

Both sides call `read_file` on the built-in file server over stdio. "raw" is the `mcp` client
alone; "engine" is one gate step (evaluate, audit row, tool-call record, events, result message
and the same call through the shared pool). Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from backend.config import Settings  # noqa: E402
from backend.app.host import Host  # noqa: E402
from backend.permissions.gate import GateCall, GateSession  # noqa: E402


async def raw_calls(workspace: Path, n: int, warmup: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_servers.file", "--root", str(workspace)])
    async with Client(params) as client:
        samples = []
        for i in range(warmup + n):
            start = time.perf_counter()
            result = await client.call_tool("read_file", {"path": "a.txt"})
            elapsed = (time.perf_counter() - start) * 1000
            assert not result.is_error
            if i >= warmup:
                samples.append(elapsed)
        return samples


async def engine_steps(root: Path, workspace: Path, n: int, warmup: int) -> list[float]:
    settings = Settings(data_dir=root / "data", workspace=workspace, model="openai/unused")
    async with Host(settings) as host:
        await host.pool.wait_ready(timeout=60)
        session = await host.runner.create(title="bench")
        gate_session = GateSession(session_id=session.id, workspace=workspace)
        samples = []
        for i in range(warmup + n):
            call = GateCall(id=f"c{i}", name="mcp__file__read_file", arguments={"path": "a.txt"})
            start = time.perf_counter()
            result = await host.gate.run(gate_session, call)
            elapsed = (time.perf_counter() - start) * 1000
            assert not result.is_error, result.text
            if i >= warmup:
                samples.append(elapsed)
        return samples


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        (workspace / "a.txt").write_text("hello\n" * 20)
        raw = percentiles(await raw_calls(workspace, args.n, args.warmup))
        engine = percentiles(await engine_steps(root, workspace, args.n, args.warmup))
    print(
        json.dumps(
            {
                "benchmark": "tool_call_overhead",
                "calls": args.n,
                "raw_mcp": raw,
                "engine_step": engine,
                "ratio_p50": round(engine["p50_ms"] / raw["p50_ms"], 3),
                "ratio_p99": round(engine["p99_ms"] / raw["p99_ms"], 3),
                "target_ratio_p50": 1.3,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
