"""N concurrent sessions of 5 tool calls each, on one host, against the scripted model.

The model server runs in a separate process so its memory is not counted as the host's.
Reports wall time, tool calls per second, step latency (p50/p99: from a session's start or its
last tool result to its next one), the host's peak RSS, memory per session and the number of MCP
server processes (which must not grow with N). Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import child_pids, peak_rss_mb, percentiles, rss_mb  # noqa: E402

from backend.config import Settings  # noqa: E402
from backend.app.host import Host  # noqa: E402
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall  # noqa: E402

CALLS_PER_SESSION = 5


def five_reads(request: ModelRequest) -> Reply:
    done = len(request.tool_results())
    if done < CALLS_PER_SESSION:
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__file__read_file", arguments={"path": "a.txt"})])
    return Reply(text=f"read it {done} times")


def five_writes(request: ModelRequest) -> Reply:
    """Five steps that change the workspace (each gets a checkpoint, issue 32). Each writes what
    no step wrote before (the session's prompt is in it), as an agent's writes usually do: a
    checkpoint then stores new content, not a copy it already holds."""
    done = len(request.tool_results())
    if done < CALLS_PER_SESSION:
        content = f"{request.last_prompt()} step {done}\n" * 10
        call = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": f"note-{done}.txt", "content": content})
        return Reply(tool_calls=[call])
    return Reply(text=f"wrote {done} files")



SCRIPTS = {"read": five_reads, "write": five_writes}


def serve_model(port_out: multiprocessing.Queue, tool: str = "read") -> None:  # type: ignore[type-arg]
    server = ScriptedModelServer(SCRIPTS[tool]).start()
    port_out.put(server.openai_base)
    while True:
        time.sleep(3600)


def mcp_server_processes(host_pid: int) -> int:
    count = 0
    for pid in child_pids(host_pid):
        try:
            if b"mcp_servers" in Path(f"/proc/{pid}/cmdline").read_bytes():
                count += 1
        except OSError:
            pass
    return count


async def run(sessions: int, root: Path, api_base: str) -> dict:
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello\n" * 10)
    settings = Settings(
        data_dir=root / "data", workspace=workspace, model="openai/scripted", api_base=api_base, api_key="x"
    )
    async with Host(settings) as host:
        await host.pool.wait_ready(timeout=60)
        warm = await host.runner.create(prompt="warm up")
        await host.runner.wait(warm.id, timeout=60)
        baseline = rss_mb()
        processes_seen = 0
        started = time.perf_counter()
        created = await asyncio.gather(*(host.runner.create(prompt=f"task {i}") for i in range(sessions)))

        async def sample() -> None:
            nonlocal processes_seen
            while True:
                processes_seen = max(processes_seen, mcp_server_processes(os.getpid()))
                await asyncio.sleep(0.2)

        sampler = asyncio.create_task(sample())
        finished = await asyncio.gather(*(host.runner.wait(s.id, timeout=600) for s in created))
        wall = time.perf_counter() - started
        sampler.cancel()
        completed = sum(s.status == "completed" for s in finished)
        peak = peak_rss_mb()
        tool_calls = sum([len(await host.store.list_tool_calls(s.id)) for s in created])
        steps = [ms for s in created for ms in step_latencies_ms(await host.store.list_events(s.id))]
    return {
        "sessions": sessions,
        "completed": completed,
        "tool_calls": tool_calls,
        "wall_s": round(wall, 2),
        "tool_calls_per_s": round(tool_calls / wall, 1),
        "host_baseline_rss_mb": round(baseline, 1),
        "host_peak_rss_mb": round(peak, 1),
        "mb_per_session": round((peak - baseline) / sessions, 3),
        "mcp_server_processes": processes_seen,
        "step_latency": percentiles(steps),
    }


def step_latencies_ms(events: list) -> list[float]:
    """A step is one model call and one tool call: the time from the session's start, or from its
    last tool result, to its next tool result."""
    marks = [e.created_at for e in events if e.type in ("session.created", "tool.result")]
    return [(later - earlier).total_seconds() * 1000 for earlier, later in zip(marks, marks[1:])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    port_out: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    model = ctx.Process(target=serve_model, args=(port_out,), daemon=True)
    model.start()
    try:
        api_base = port_out.get(timeout=60)
        with tempfile.TemporaryDirectory() as tmp:
            result = asyncio.run(run(args.sessions, Path(tmp), api_base))
    finally:
        model.terminate()
        model.join(10)
    print(json.dumps({"benchmark": "concurrency", **result, "target_mb_per_session": 2.0}, indent=2))


if __name__ == "__main__":
    main()
