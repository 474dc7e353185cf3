"""Calls into the dashboard's pure TypeScript modules (web/src/diff.ts, hunks.ts) from pytest,
through node and the web's own TypeScript compiler (ts_modules.cjs), one node run per batch."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
WEB = HERE.parents[1] / "web"


def run(calls: list[tuple[str, list[Any]]]) -> list[Any]:
    """The answers to `(op, args)` calls, in order (ops: see ts_modules.cjs)."""
    if shutil.which("node") is None or not (WEB / "node_modules" / "typescript").is_dir():
        pytest.fail("these tests need node and web/node_modules: run `make test` (or cd web && npm ci)")
    payload = json.dumps([{"op": op, "args": args} for op, args in calls])
    done = subprocess.run(
        ["node", str(HERE / "ts_modules.cjs")], input=payload, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def call(op: str, *args: Any) -> Any:
    (answer,) = run([(op, list(args))])
    return answer
