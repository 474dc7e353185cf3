"""What the sandbox adds to a command: `exec` through the host's pool, confined and not, side by side.

Each round runs the same command twice on the built-in shell server over stdio: once with the
sandbox the host makes for the call (bubblewrap here: namespaces and mounts per command), once
with `sandbox: off`'s unconfined launch. The two take turns so both see the same machine.
Commands: `true`, and a typical one (`git status` and `grep -rn` in a small repository).
Prints JSON: p50 and p99 in ms per side, and what the sandbox adds at p50.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles  # noqa: E402

from backend.mcp.config import builtin_servers  # noqa: E402
from backend.mcp.pool import McpPool  # noqa: E402
from backend.approvals.confinement import Confinement  # noqa: E402
from backend.rules.policy_engine import PolicyEngine  # noqa: E402
from backend.rules.grammar import RuleSet  # noqa: E402
from backend.sandbox.launcher import Sandbox, SandboxStatus, detect  # noqa: E402

COMMANDS = {"true": "true", "typical": "git status --short && grep -rn needle src | wc -l"}


def make_repo(workspace: Path) -> None:
    """A small git repository: 40 source files, one commit, one change."""
    (workspace / "src").mkdir(parents=True)
    for i in range(40):
        (workspace / "src" / f"m{i}.py").write_text("".join(f"line {j} needle {i}\n" for j in range(50)))
    (workspace / "AGENTS.md").write_text("be careful\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (workspace / "src" / "m0.py").write_text("changed\n")


async def measure(root: Path, n: int, warmup: int) -> dict[str, object]:
    workspace = (root / "ws").resolve()
    make_repo(workspace)
    status = detect("auto")
    confined = Confinement(sandbox=Sandbox(status), data_dir=root / "data", instruction_files=("AGENTS.md",))
    unconfined = Confinement(sandbox=Sandbox(SandboxStatus(backend="off", detail="bench")), data_dir=root / "data")
    policy = PolicyEngine(RuleSet())
    servers = {"shell": builtin_servers(root=workspace)["shell"]}
    report: dict[str, object] = {"backend": status.backend, "n": n}
    async with McpPool(servers, log_dir=root / "logs") as pool:
        await pool.wait_ready(timeout=60)
        for label, command in COMMANDS.items():
            times: dict[str, list[float]] = {"sandbox": [], "plain": []}
            for i in range(warmup + n):
                for side, confinement in (("sandbox", confined), ("plain", unconfined)):
                    start = time.perf_counter()
                    plan = confinement.plan(workspace=workspace, policy=policy)
                    result = await pool.call(
                        "mcp__shell__exec", {"command": command}, workspace=workspace, session_id="bench", sandbox=plan.launch
                    )
                    elapsed = (time.perf_counter() - start) * 1000
                    assert not result.is_error, result.text
                    if i >= warmup:
                        times[side].append(elapsed)
            sandbox, plain = percentiles(times["sandbox"]), percentiles(times["plain"])
            report[label] = {
                "sandbox_ms": sandbox,
                "plain_ms": plain,
                "added_p50_ms": round(sandbox["p50_ms"] - plain["p50_ms"], 2),
            }
    return report


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(await measure(Path(tmp), args.n, args.warmup), indent=2))


if __name__ == "__main__":
    asyncio.run(main())
