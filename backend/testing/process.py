"""`overseer ...` as a real child process whose output lines a test can wait on, with a bound.

Restart tests kill such a process with SIGKILL; what they wait for is a line it prints (a JSON
event of `run --json`, or the server's "running on" line), never a guess at how long it takes.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


class OverseerProcess:
    """A child `python -m backend.cli ARGS`, its stdout and stderr merged into one line queue."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", *args],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for_line(self, matches: Callable[[str], bool], *, what: str, timeout: float = 60) -> str:
        """The next output line that `matches`; AssertionError naming `what` at the bound or exit."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"no {what} within {timeout} s; output:\n{''.join(self.seen)}") from None
            if line is None:
                raise AssertionError(f"process ended before {what}; output:\n{''.join(self.seen)}")
            self.seen.append(line)
            if matches(line):
                return line

    def wait_for_event(self, type_: str, *, timeout: float = 60) -> dict[str, Any]:
        """The next JSON event of that type printed by `run --json` / `resume --json`."""
        line = self.wait_for_line(lambda text: _event_type(text) == type_, what=f"event {type_}", timeout=timeout)
        return json.loads(line)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self, timeout: float = 20) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout)

    def finish(self, timeout: float = 90) -> int:
        """Wait for the exit status, keeping what it printed for the failure message."""
        code = self.proc.wait(timeout=timeout)
        while (line := self._lines.get(timeout=timeout)) is not None:
            self.seen.append(line)
        return code

    @property
    def output(self) -> str:
        return "".join(self.seen)


def _event_type(line: str) -> str | None:
    if not line.startswith("{"):
        return None
    try:
        return json.loads(line).get("type")
    except ValueError:
        return None
