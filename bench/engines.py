"""The same scripted conversation on both engines: LiteLLM (our loop) and claude-sdk (Claude Code's).

Each session makes 3 tool calls (list_dir, write_file, read_file); write_file asks, and the
approval is answered from code the moment it arrives. The model server runs in a separate
process, so its memory is not counted, and stamps each request's arrival. For every session:
time from creation to the first model request and to the end; the RSS of the host plus every
process under it (MCP servers, the CLI), sampled while the approval is pending, against the
same sum just before the session; and the number of processes under the host at that moment.
One unmeasured session per engine warms imports and caches first. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import child_pids, rss_mb  # noqa: E402

from backend.domain.session_options import SessionOptions
from backend.config import Settings  # noqa: E402
from backend.domain.models import Decision  # noqa: E402
from backend.app.host import Host  # noqa: E402
from backend.mcp.config import builtin_servers  # noqa: E402
from backend.mcp.pool import McpPool  # noqa: E402
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall  # noqa: E402

ENGINES = ("litellm", "claude-sdk")
CALLS = [
    ScriptedToolCall(name="mcp__file__list_dir", arguments={"path": "."}),
    ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "benchmark\n"}),
    ScriptedToolCall(name="mcp__file__read_file", arguments={"path": "notes.txt"}),
]


def conversation(arrivals: Any) -> Any:
    """Stateless, so it serves both wire formats: the next call, or the answer after the third."""

    def next_turn(request: ModelRequest) -> Reply:
        arrivals.put((request.last_prompt(), time.time()))
        done = len(request.tool_results())
        if done < len(CALLS):
            return Reply(tool_calls=[CALLS[done]], usage=(1000, 20))
        return Reply(text="Listed, wrote and read notes.txt.", usage=(1200, 12))

    return next_turn


def serve_model(arrivals: Any, port_out: Any) -> None:
    server = ScriptedModelServer(conversation(arrivals)).start()
    port_out.put(server.url)
    while True:
        time.sleep(3600)


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in child_pids(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


NOT_THE_HOST: set[int] = set()
"""Processes under this one that are the benchmark's, not the host's: the model server and
multiprocessing's helper."""


def tree_rss_mb(pid: int) -> tuple[float, int]:
    """RSS of a process and everything under it, and how many processes that is (itself excluded)."""
    below = [p for p in descendants(pid) if p not in NOT_THE_HOST]
    total = rss_mb(pid)
    for child in below:
        try:
            total += rss_mb(child)
        except OSError:  # it ended meanwhile
            pass
    return total, len(below)


def first_arrival(arrivals: Any, prompt: str) -> float:
    """The wall time the model server received the first request of the session with this prompt."""
    seen = []
    while not arrivals.empty():
        seen.append(arrivals.get_nowait())
    return min(t for p, t in seen if prompt in p)


async def one_session(host: Host, engine: str, prompt: str, arrivals: Any) -> dict[str, Any]:
    me = os.getpid()
    before_mb, before_procs = tree_rss_mb(me)
    events = host.bus.subscribe(None)
    created_at = time.time()
    started = time.perf_counter()
    options = SessionOptions(engine=engine)  # type: ignore[arg-type]
    session = await host.runner.create(prompt=prompt, options=options)
    while True:
        event = await events.get(timeout=120)
        if event.type == "approval.requested" and event.session_id == session.id:
            break
    during_mb, during_procs = tree_rss_mb(me)
    await host.broker.answer(event.data["id"], Decision(kind="allow_once"))
    done = await host.runner.wait(session.id, timeout=120)
    total = time.perf_counter() - started
    host.bus.unsubscribe(events)
    calls = await host.store.list_tool_calls(session.id)
    return {
        "status": done.status,
        "tool_calls": len(calls),
        "approvals": len(await host.store.list_approvals(session_id=session.id)),
        "first_model_request_ms": round((first_arrival(arrivals, prompt) - created_at) * 1000, 1),
        "total_ms": round(total * 1000, 1),
        "host_and_children_rss_mb": round(during_mb, 1),
        "rss_added_by_session_mb": round(during_mb - before_mb, 1),
        "processes_under_host": during_procs,
        "processes_added_by_session": during_procs - before_procs,
        "tokens": {"input": done.usage.input_tokens, "output": done.usage.output_tokens},
    }


async def run(root: Path, model_url: str, arrivals: Any, repeat: int) -> dict[str, Any]:
    workspace = root / "workspace"
    workspace.mkdir()
    settings = Settings(
        data_dir=root / "data",
        workspace=workspace,
        model="anthropic/scripted",
        api_base=model_url,
        api_key="x",
        memory_window=0,
        scheduler_enabled=False,
    )
    configs = builtin_servers(root=workspace, python=sys.executable)
    async with McpPool({k: configs[k] for k in ("file", "shell")}, log_dir=root / "logs") as pool:
        await pool.wait_ready(timeout=60)
        async with Host(settings, pool=pool) as host:
            results: dict[str, Any] = {}
            for engine in ENGINES:
                cold = await one_session(host, engine, f"{engine} warm-up", arrivals)
                runs = [await one_session(host, engine, f"{engine} run {i}", arrivals) for i in range(repeat)]
                results[engine] = {"cold": cold, "warm_median": _median(runs), "warm_runs": runs}
    return results


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [k for k, v in runs[0].items() if isinstance(v, int | float)]
    return {k: round(statistics.median(r[k] for r in runs), 1) for k in keys}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    ctx = multiprocessing.get_context("spawn")
    arrivals = ctx.Queue()
    port_out = ctx.Queue()
    model = ctx.Process(target=serve_model, args=(arrivals, port_out), daemon=True)
    model.start()
    try:
        model_url = port_out.get(timeout=60)
        NOT_THE_HOST.update(descendants(os.getpid()))
        with tempfile.TemporaryDirectory() as tmp:
            result = asyncio.run(run(Path(tmp), model_url, arrivals, args.repeat))
    finally:
        model.terminate()
        model.join(10)
    print(
        json.dumps(
            {"benchmark": "engines", "conversation": "3 tool calls, 1 approval", "repeat": args.repeat, **result},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
