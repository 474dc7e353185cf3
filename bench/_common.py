"""Shared bits of the benchmarks: percentiles, process memory, child processes."""

from __future__ import annotations

import os
import statistics
from pathlib import Path


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50_ms": round(q[49], 3), "p99_ms": round(q[98], 3), "mean_ms": round(statistics.fmean(ordered), 3)}


def _status_kb(field: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def rss_mb(pid: int | str = "self") -> float:
    return _status_kb("VmRSS", pid) / 1024


def peak_rss_mb() -> float:
    return _status_kb("VmHWM") / 1024


def child_pids(parent: int | None = None) -> list[int]:
    """Direct children of a process (the MCP servers the host spawned)."""
    parent = parent or os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found
