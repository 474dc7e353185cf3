"""What a checkpoint costs (issue 32): a shadow-repository snapshot when one file changed, beside
a plain `git add -A && git commit` in a copy of the same tree.

The workspace: `--files` files (default 10,000) in 100 folders, `--mb` megabytes in all (default
200). After one full snapshot (setup, not measured), each round appends a line to one random
file in each tree, then times `ShadowRepo.snapshot` and `git add -A && git commit` (taking
turns, so both see the same machine). Prints JSON: p50 and p99 in ms per side, the p50 of each
part of a snapshot (it runs in process, through libgit2: `stage` is the status and the hashing of
what changed and the trees, `keep` its line in the snapshot log), the shadow
repository's size, the machine's load. It also gives the
CPU time of each side (this process and its git children), which a busy machine inflates less.

    .venv/bin/python bench/checkpoints.py                    # the issue's size (setup takes a while)
    .venv/bin/python bench/checkpoints.py --files 1000 --mb 20 --rounds 20   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles  # noqa: E402

from backend.checkpoints import _stage  # noqa: E402
from backend.checkpoints.shadow import ShadowRepo  # noqa: E402


class Took(list[float]):
    """Filled on leaving `timed()`: [wall ms, CPU ms of this process and its children]."""


@contextmanager
def timed() -> Iterator[Took]:
    """Wall time and CPU time (ours and the git processes'): CPU time holds on a busy machine."""
    took = Took()
    wall = time.perf_counter()
    cpu = _cpu_s()
    yield took
    took.extend([(time.perf_counter() - wall) * 1000, (_cpu_s() - cpu) * 1000])


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def make_tree(workspace: Path, files: int, total_bytes: int) -> list[Path]:
    """`files` files of random text (lines of hex, so git compresses them about as it does code)."""
    size = max(1, total_bytes // files)
    made = []
    for i in range(files):
        path = workspace / f"pkg{i % 100}" / f"module_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = os.urandom(size // 2 + 1).hex()[:size]
        path.write_text("\n".join(raw[j : j + 80] for j in range(0, len(raw), 81)))
        made.append(path)
    return made


def plain_git(workspace: Path) -> list[str]:
    return ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-C", str(workspace)]


def measure(root: Path, files: int, megabytes: float, rounds: int, warmup: int) -> dict[str, object]:
    workspace, copy = root / "workspace", root / "copy"
    started = time.perf_counter()
    paths = make_tree(workspace, files, int(megabytes * 1024 * 1024))
    shutil.copytree(workspace, copy, symlinks=True)
    shadow = ShadowRepo(workspace, root=root / "checkpoints")
    shadow.snapshot()
    git = plain_git(copy)
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "setup"], check=True)
    setup_s = time.perf_counter() - started

    stages: dict[str, list[float]] = defaultdict(list)
    parts = {name: getattr(_stage.Stager, name) for name in ("stage", "keep")}

    def timing(name: str) -> object:
        def timed_part(self: _stage.Stager, *args: object) -> object:
            begun = time.perf_counter()
            try:
                return parts[name](self, *args)  # type: ignore[operator]
            finally:
                stages[name].append((time.perf_counter() - begun) * 1000)

        return timed_part

    for name in parts:
        setattr(_stage.Stager, name, timing(name))
    shadow_ms: list[float] = []
    plain_ms: list[float] = []
    shadow_cpu: list[float] = []
    plain_cpu: list[float] = []
    chooser = random.Random(32)
    for n in range(warmup + rounds):
        stages_before = {name: len(samples) for name, samples in stages.items()}
        changed = chooser.choice(paths)
        for tree in (workspace, copy):
            with open(tree / changed.relative_to(workspace), "a") as handle:
                handle.write(f"\nround {n}\n")

        def snapshot() -> tuple[float, float]:
            with timed() as took:
                shadow.snapshot()
            return took

        def add_and_commit() -> tuple[float, float]:
            with timed() as took:
                subprocess.run([*git, "add", "-A"], check=True)
                subprocess.run([*git, "commit", "-qm", f"round {n}"], check=True)
            return took

        first, second = (snapshot, add_and_commit) if n % 2 else (add_and_commit, snapshot)
        results = {first: first(), second: second()}
        if n < warmup:
            for name, count in stages_before.items():
                del stages[name][count:]
            for name in set(stages) - set(stages_before):
                del stages[name]
            continue
        shadow_ms.append(results[snapshot][0])
        plain_ms.append(results[add_and_commit][0])
        shadow_cpu.append(results[snapshot][1])
        plain_cpu.append(results[add_and_commit][1])
    for name, part in parts.items():
        setattr(_stage.Stager, name, part)

    return {
        "files": files,
        "megabytes": megabytes,
        "rounds": rounds,
        "setup_s": round(setup_s, 1),
        "shadow_snapshot": percentiles(shadow_ms),
        "git_add_and_commit": percentiles(plain_ms),
        "shadow_snapshot_cpu": percentiles(shadow_cpu),
        "git_add_and_commit_cpu": percentiles(plain_cpu),
        "snapshot_parts_p50_ms": {name: percentiles(samples)["p50_ms"] for name, samples in stages.items()},
        "shadow_disk_mb": round(shadow.disk_bytes() / 1024 / 1024, 1),
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000, help="files in the workspace (default 10000)")
    parser.add_argument("--mb", type=float, default=200.0, help="megabytes in all (default 200)")
    parser.add_argument("--rounds", type=int, default=100, help="measured rounds (default 100)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds before measuring (default 3)")
    args = parser.parse_args()
    if args.files < 1 or args.mb <= 0 or args.rounds < 2 or args.warmup < 0:
        parser.error("--files must be 1 or more, --mb above 0, --rounds 2 or more, --warmup 0 or more")
    with tempfile.TemporaryDirectory(prefix="overseer-bench-checkpoints-") as folder:
        print(json.dumps(measure(Path(folder), args.files, args.mb, args.rounds, args.warmup), indent=2))


if __name__ == "__main__":
    main()
