"""Cross-process approval wake-up: an answer committed by a second process -> the wait here returns.

Two processes on one SQLite file, as `overseer serve` and `overseer mcp` on one data dir. This
process opens an approval and waits on it; a long-lived child (its own store and broker) answers
each id it reads on stdin and prints the wall-clock time right after its commit. The latency is
that time against the moment the wait here returned (one machine, one clock). Each answer lands
just after the watch's first tick, so this is near the worst case (one tick, `ApprovalWatch.interval`);
an answer given at a random moment waits half a tick on average. Prints JSON.
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

from backend.engine.events import EventBus  # noqa: E402
from backend.approvals.broker import ApprovalBroker  # noqa: E402
from backend.store import SqliteStore  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

ANSWERER = """
import asyncio, sys, time
from backend.domain.models import Decision
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.store import SqliteStore

async def main(path):
    async with SqliteStore(path) as store:
        broker = ApprovalBroker(store, EventBus(store))
        loop = asyncio.get_running_loop()
        print("ready", flush=True)
        while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
            await broker.answer(line, Decision(kind="allow_once"))
            print(time.time(), flush=True)

asyncio.run(main(sys.argv[1]))
"""


async def measure(path: Path, count: int) -> list[float]:
    async with SqliteStore(path) as store:
        broker = ApprovalBroker(store, EventBus(store), timeout=600)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ANSWERER, str(path),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=REPO,
        )  # fmt: skip
        assert child.stdin is not None and child.stdout is not None
        assert (await asyncio.wait_for(child.stdout.readline(), 60)).strip() == b"ready"
        samples = []
        try:
            for i in range(count):
                approval = await broker.open(
                    session_id="s1", tool_call_id=f"c{i}", tool_name="t", arguments={}
                )
                waiting = asyncio.create_task(broker.wait(approval.id))
                await asyncio.wait_for(broker.watch.active.wait(), 5)
                child.stdin.write(f"{approval.id}\n".encode())
                await child.stdin.drain()
                committed_at = float(await asyncio.wait_for(child.stdout.readline(), 10))
                done = await asyncio.wait_for(waiting, 10)
                assert done.status == "allowed"
                samples.append((time.time() - committed_at) * 1000)
        finally:
            child.stdin.close()
            await asyncio.wait_for(child.wait(), 10)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        samples = asyncio.run(measure(Path(tmp) / "overseer.db", args.count))
    report = {"bench": "approval_cross_process", "count": args.count, "wake_after_commit": percentiles(samples)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
