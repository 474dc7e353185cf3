"""What the engine adds to a tool call: policy, persistence and events, over a raw MCP call.

Both sides call `read_file` on the built-in file server over stdio. "raw" is the `mcp` client
alone; "engine" is one gate step (evaluate, audit row, tool-call record, events, result message
and the same call through the shared pool). The two take turns. Prints JSON.
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

from backend.domain.session_options import SessionOptions
from backend.config import Settings  # noqa: E402
from backend.app.host import Host  # noqa: E402
from backend.approvals.gate import GateCall, GateSession  # noqa: E402


async def paired_calls(root: Path, workspace: Path, n: int, warmup: int) -> tuple[list[float], list[float]]:
    """Raw calls and engine steps taken in turns, so both see the same machine: on a shared
    machine whose load changes, measuring one side after the other skews the ratio either way."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_servers.file", "--root", str(workspace)])
    settings = Settings(data_dir=root / "data", workspace=workspace, model="openai/unused")
    async with Client(params) as client, Host(settings) as host:
        await host.pool.wait_ready(timeout=60)
        session = await host.runner.create(options=SessionOptions(title="bench"))
        gate_session = GateSession(session_id=session.id, workspace=workspace)
        raw: list[float] = []
        engine: list[float] = []
        for i in range(warmup + n):
            start = time.perf_counter()
            result = await client.call_tool("read_file", {"path": "a.txt"})
            raw_ms = (time.perf_counter() - start) * 1000
            assert not result.is_error
            call = GateCall(id=f"c{i}", name="mcp__file__read_file", arguments={"path": "a.txt"})
            start = time.perf_counter()
            step = await host.gate.run(gate_session, call)
            engine_ms = (time.perf_counter() - start) * 1000
            assert not step.is_error, step.text
            if i >= warmup:
                raw.append(raw_ms)
                engine.append(engine_ms)
        return raw, engine


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
        raw_ms, engine_ms = await paired_calls(root, workspace, args.n, args.warmup)
        raw, engine = percentiles(raw_ms), percentiles(engine_ms)
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
