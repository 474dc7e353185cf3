"""What the engine adds to a remote tool call: policy, persistence and events, over a raw MCP call.

Both sides call `echo` on the same loopback Streamable HTTP server (tests/mcp/fixtures/
remote_server.py in its own process, built with the SDK's server side). "raw" is the `mcp`
client alone over the SDK's transport; "engine" is one gate step (evaluate, audit row, tool-call
record, events, result message, and the call through the pool's shared remote connection).
`--legacy` makes the server a handshake-era one (initialize, Mcp-Session-Id). Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import percentiles  # noqa: E402
from mcp import Client  # noqa: E402

from backend.domain.session_options import SessionOptions
from backend.app.host import Host  # noqa: E402
from backend.config import Settings  # noqa: E402
from backend.mcp.config import McpServerConfig  # noqa: E402
from backend.approvals.gate import GateCall, GateSession  # noqa: E402
from backend.testing.harness import only_servers  # noqa: E402

SERVER = ROOT / "tests" / "mcp" / "fixtures" / "remote_server.py"


async def raw_calls(url: str, n: int, warmup: int) -> list[float]:
    async with Client(url, cache=None) as client:
        samples = []
        for i in range(warmup + n):
            start = time.perf_counter()
            result = await client.call_tool("echo", {"text": "hello"})
            elapsed = (time.perf_counter() - start) * 1000
            assert not result.is_error
            if i >= warmup:
                samples.append(elapsed)
        return samples


async def engine_steps(root: Path, url: str, n: int, warmup: int) -> list[float]:
    workspace = root / "workspace"
    workspace.mkdir()
    servers = {**only_servers(), "docs": McpServerConfig(type="http", url=url)}
    settings = Settings(
        data_dir=root / "data", workspace=workspace, model="openai/unused", mcp_servers=servers,
        policies={"mcp__docs__echo": "always_allow"},
    )
    async with Host(settings) as host:
        await host.pool.wait_ready(timeout=60)
        session = await host.runner.create(options=SessionOptions(title="bench"))
        gate_session = GateSession(session_id=session.id, workspace=workspace)
        samples = []
        for i in range(warmup + n):
            call = GateCall(id=f"c{i}", name="mcp__docs__echo", arguments={"text": "hello"})
            start = time.perf_counter()
            result = await host.gate.run(gate_session, call)
            elapsed = (time.perf_counter() - start) * 1000
            assert not result.is_error, result.text
            if i >= warmup:
                samples.append(elapsed)
        return samples


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--legacy", action="store_true")
    args = parser.parse_args()
    command = [sys.executable, str(SERVER), *(["--legacy"] if args.legacy else [])]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            raw = percentiles(await raw_calls(url, args.n, args.warmup))
            engine = percentiles(await engine_steps(Path(tmp), url, args.n, args.warmup))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(
        json.dumps(
            {
                "benchmark": "remote_tool_call",
                "era": "handshake" if args.legacy else "2026-07-28",
                "calls": args.n,
                "raw_mcp": raw,
                "engine_step": engine,
                "ratio_p50": round(engine["p50_ms"] / raw["p50_ms"], 3),
                "ratio_p99": round(engine["p99_ms"] / raw["p99_ms"], 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
