"""What a configured hook costs a tool step (issue 34, item 1).

One gate step (`ToolGate.run`: evaluate, audit row, record, events, `read_file` through the
shared pool) with no hook, with one PreToolUse command hook, and with one PreToolUse URL hook,
taken in turns so all three see the same machine. The command hook runs as every hook command
does, in the session's sandbox (bubblewrap or Landlock, as detected here), with the event's JSON
on stdin; the URL hook is POSTed to a loopback server running in a thread of its own.

    python bench/hooks.py [-n 200] [--warmup 20] [--command 'cat > /dev/null'] [--sandbox auto|off]

Prints JSON: percentiles per variant and what the hook adds at p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles  # noqa: E402

from backend.app.host import Host  # noqa: E402
from backend.approvals.gate import GateCall, GateSession  # noqa: E402
from backend.config import Settings  # noqa: E402
from backend.domain.hook_config import HooksConfig  # noqa: E402
from backend.domain.session_options import SessionOptions  # noqa: E402

DEFAULT_COMMAND = "python3 -c 'import json, sys; json.load(sys.stdin)'"
"""A hook that reads its event, as every real hook does, and lets the call through (exit 0)."""


def start_url_hook() -> tuple[uvicorn.Server, str]:
    """A loopback hook endpoint that answers every event with `{}` (no decision), in its own thread."""

    async def hook(request: Request) -> JSONResponse:
        await request.json()
        return JSONResponse({})

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise TimeoutError("the hook server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/hook"


def pre_tool_use(handler: dict) -> HooksConfig:
    return HooksConfig.model_validate({"PreToolUse": [{"matcher": "", "hooks": [handler]}]})


async def steps(
    root: Path, workspace: Path, n: int, warmup: int, command: str, url: str, sandbox: str
) -> tuple[dict[str, list[float]], str]:
    """Each variant's step times (ms), and the sandbox the command hook ran in."""
    settings = Settings(
        data_dir=root / "data", workspace=workspace, model="openai/unused", sandbox={"backend": sandbox}
    )
    variants = {
        "none": HooksConfig({}),
        "command_hook": pre_tool_use({"type": "command", "command": command, "timeout": 30}),
        "url_hook": pre_tool_use({"type": "http", "url": url, "timeout": 30}),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    async with Host(settings) as host:
        await host.pool.wait_ready(timeout=60)
        session = await host.runner.create(options=SessionOptions(title="bench"))
        gate_session = GateSession(session_id=session.id, workspace=workspace)
        for i in range(warmup + n):
            for name, config in variants.items():
                host.gate.configured_hooks.use(config)
                call = GateCall(id=f"{name}-{i}", name="mcp__file__read_file", arguments={"path": "a.txt"})
                start = time.perf_counter()
                result = await host.gate.run(gate_session, call)
                elapsed = (time.perf_counter() - start) * 1000
                assert not result.is_error, result.text
                if i >= warmup:
                    samples[name].append(elapsed)
        return samples, host.sandbox.status.backend


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--command", default=DEFAULT_COMMAND)
    parser.add_argument("--sandbox", default="auto", help="auto (as a host detects it) or off: what confinement costs")
    args = parser.parse_args()
    server, url = start_url_hook()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            workspace = root / "workspace"
            workspace.mkdir()
            (workspace / "a.txt").write_text("hello\n" * 20)
            samples, backend = await steps(root, workspace, args.n, args.warmup, args.command, url, args.sandbox)
    finally:
        server.should_exit = True
    stats = {name: percentiles(values) for name, values in samples.items()}
    base = stats["none"]["p50_ms"]
    print(
        json.dumps(
            {
                "benchmark": "hooks",
                "steps_per_variant": args.n,
                "sandbox": backend,
                "hook_command": args.command,
                **stats,
                "command_hook_adds_p50_ms": round(stats["command_hook"]["p50_ms"] - base, 3),
                "url_hook_adds_p50_ms": round(stats["url_hook"]["p50_ms"] - base, 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
