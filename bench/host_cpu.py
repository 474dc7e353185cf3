"""Host CPU per agent step: the `overseer serve` process's own CPU seconds over a scripted load.

N sessions (default 100) of 5 `read_file` calls each are started over the REST API of a real
`overseer serve` process; the scripted model runs in another process, so neither its CPU nor
the tool servers' (children of serve, with their own /proc stat) is counted. A step is one
model call plus one tool call. CPU is read from /proc/PID/stat (utime + stime) once the host
is warm, and again when every session has ended; the load itself is what is measured.

`--tool write` makes each step a `write_file`, which takes a checkpoint of the workspace first
(issue 32); the CPU of the host's short-lived children (git, for the checkpoints) is counted
too (cutime + cstime), so `--checkpoints off` against `on` is what a step's checkpoint costs.

    python bench/host_cpu.py [--sessions 100] [--runs 3] [--tool read|write] [--checkpoints on|off] [--profile out.txt]
    python bench/host_cpu.py --tool write --pairs 12 [--sessions 200]

`--pairs N` settles what checkpoints cost: N pairs of runs, checkpoints off and on, one model
server; the two hosts of a pair run side by side, their loads started together, so a machine
whose speed drifts weighs on both alike (run one after the other, they differed by more than
the cost measured). It reports each pair's difference, their median and a 95% bootstrap
interval of the median relative rise. Use it with `--tool write` (a `read_file` step takes no
checkpoint).

`--profile` records the serve process with py-spy (if installed) during the first run.
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from concurrency import CALLS_PER_SESSION, serve_model  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
BOUND = 600.0


def cpu_seconds(pid: int) -> float:
    """The process's own CPU and that of its children it has waited for (git, never the tool servers, which outlive the load)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / TICKS  # utime, stime, cutime, cstime


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, what: str, timeout: float = BOUND, every: float = 0.25) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(every)


def one_run(
    sessions: int,
    api_base: str,
    profile: Path | None,
    *,
    tool: str = "read",
    checkpoints: bool = True,
    together: threading.Barrier | None = None,
) -> dict:
    """One host, warmed up, then `sessions` sessions measured. `together`: the load starts when
    every party's host is warm (hosts run side by side)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        (workspace / "a.txt").write_text("hello\n" * 10)
        port = free_port()
        env = {
            **os.environ,
            "OVERSEER_DATA_DIR": str(root / "data"),
            "OVERSEER_WORKSPACE": str(workspace),
            "OVERSEER_MODEL": "openai/scripted",
            "OVERSEER_API_BASE": api_base,
            "OVERSEER_API_KEY": "x",
            "OVERSEER_TOKEN": "bench-token",
            "OVERSEER_PORT": str(port),
            "OVERSEER_PERMISSIONS": json.dumps({"allow": [f"mcp__file__{tool}_file"]}),
            "OVERSEER_CHECKPOINTS": json.dumps({"enabled": checkpoints}),
            "OVERSEER_SCHEDULER_ENABLED": "false",
        }
        log = (root / "serve.log").open("w")
        serve = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root
        )
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": "Bearer bench-token"}
        client = httpx.Client(base_url=base, headers=headers, timeout=60)
        spy: subprocess.Popen | None = None
        try:
            try:
                wait_until(lambda: _up(client) or serve.poll() is not None, "overseer serve to answer", timeout=120)
            finally:
                if serve.poll() is not None:
                    sys.exit(f"overseer serve exited:\n{(root / 'serve.log').read_text()[-3000:]}")

            polls = 0

            def finished(ids: list[str]) -> bool:
                # One active session (limit 1) is all a poll asks for while the load runs: a
                # listing of every session costs the host milliseconds, and a run that takes
                # longer would pay it more often (checkpoints on against off, say).
                nonlocal polls
                polls += 1
                for active in ("running", "waiting_approval"):
                    if client.get("/api/sessions", params={"status": active, "limit": 1}).json():
                        return False
                states = {s["id"]: s["status"] for s in client.get("/api/sessions", params={"limit": 1000}).json()}
                return all(states.get(i) in ("completed", "error", "stopped") for i in ids)

            warm = client.post("/api/sessions", json={"prompt": "warm up"}).json()["id"]
            wait_until(lambda: finished([warm]), "the warm-up session")
            if together is not None:
                together.wait(BOUND)
            if profile is not None and shutil.which("py-spy"):
                spy = subprocess.Popen(
                    ["py-spy", "record", "--pid", str(serve.pid), "--format", "raw", "--gil", "--output", str(profile), "--nonblocking"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
            before = cpu_seconds(serve.pid)
            started = time.perf_counter()
            ids = [client.post("/api/sessions", json={"prompt": f"task {i}"}).json()["id"] for i in range(sessions)]
            wait_until(lambda: finished(ids), f"{sessions} sessions", every=0.5)
            wall = time.perf_counter() - started
            cpu = cpu_seconds(serve.pid) - before
            states = [s for s in client.get("/api/sessions", params={"limit": 1000}).json() if s["id"] in ids]
        finally:
            if spy is not None:
                spy.send_signal(2)
                spy.wait(30)
            serve.terminate()
            serve.wait(30)
            client.close()
    steps = sessions * CALLS_PER_SESSION
    return {
        "completed": sum(s["status"] == "completed" for s in states),
        "steps": steps,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_step": round(cpu * 1000 / steps, 3),
        "polls": polls,
    }


def _up(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").status_code == 200
    except httpx.HTTPError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=0, help="checkpoints off against on, N interleaved pairs")
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--tool", choices=("read", "write"), default="read")
    parser.add_argument("--checkpoints", choices=("on", "off"), default="on")
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    port_out: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    model = ctx.Process(target=serve_model, args=(port_out, args.tool), daemon=True)
    model.start()
    try:
        api_base = port_out.get(timeout=60)
        if args.pairs:
            report = compare_checkpoints(args.pairs, args.sessions, api_base, args.tool)
        else:
            report = repeat(args, api_base)
    finally:
        model.terminate()
        model.join(10)
    print(json.dumps({"benchmark": "host_cpu", "sessions": args.sessions, "tool": args.tool, **report}, indent=2))


def repeat(args: argparse.Namespace, api_base: str) -> dict:
    runs = [
        one_run(
            args.sessions, api_base, args.profile if i == 0 else None,
            tool=args.tool, checkpoints=args.checkpoints == "on",
        )
        for i in range(args.runs)
    ]
    per_step = [r["cpu_ms_per_step"] for r in runs]
    return {
        "checkpoints": args.checkpoints,
        "runs": runs,
        "cpu_ms_per_step_median": statistics.median(per_step),
        "target_cpu_ms_per_step": 5.0,
    }


def compare_checkpoints(pairs: int, sessions: int, api_base: str, tool: str) -> dict:
    """Checkpoints off against on in `pairs` pairs; the two hosts of a pair run side by side,
    their loads started together, so a machine whose speed drifts (a shared VM's does, by half
    within minutes) weighs on both alike: each pair's rise is off and on measured at once."""
    rows = []
    for i in range(pairs):
        together = threading.Barrier(2)
        ran: dict[bool, float] = {}

        def run(on: bool) -> None:
            ran[on] = one_run(sessions, api_base, None, tool=tool, checkpoints=on, together=together)["cpu_ms_per_step"]

        threads = [threading.Thread(target=run, args=(on,)) for on in (False, True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if len(ran) != 2:
            sys.exit(f"pair {i + 1} did not finish (see above)")
        rows.append((ran[False], ran[True]))
        print(f"pair {i + 1}: off {ran[False]:.3f} ms, on {ran[True]:.3f} ms", file=sys.stderr, flush=True)
    off = [a for a, _ in rows]
    on = [b for _, b in rows]
    rises = [b / a - 1 for a, b in rows]
    low, high = _bootstrap_median(rises)
    return {
        "pairs": [{"off": a, "on": b} for a, b in rows],
        "off_median_ms": round(statistics.median(off), 3),
        "on_median_ms": round(statistics.median(on), 3),
        "pair_difference_median_ms": round(statistics.median(b - a for a, b in rows), 3),
        "rise_median": round(statistics.median(rises), 4),
        "rise_median_95ci": [round(low, 4), round(high, 4)],
        "target_rise": 0.10,
    }


def _bootstrap_median(values: list[float], rounds: int = 10_000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the median (seeded: the same pairs give the same interval)."""
    rng = random.Random(32)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(rounds * 0.025)], medians[int(rounds * 0.975) - 1]


if __name__ == "__main__":
    main()
