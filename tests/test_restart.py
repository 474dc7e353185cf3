"""Approvals survive a SIGKILL: a real host process is killed and a new one takes over."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backend.store import SqliteStore
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall

REPO = Path(__file__).resolve().parents[1]


class HostProcess:
    """`overseer ...` as a child process whose JSON event lines a test can wait on."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", *args],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for_event(self, type_: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line is None:
                raise AssertionError(f"process ended before {type_}: {self.proc.stderr.read()}")
            event = json.loads(line)
            if event["type"] == type_:
                return event

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def finish(self, timeout: float = 90) -> int:
        code = self.proc.wait(timeout=timeout)
        return code


@pytest.fixture
def env(tmp_path):
    model = ScriptedModelServer(restart_script).start()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    values = {
        **os.environ,
        "OVERSEER_DATA_DIR": str(tmp_path / "data"),
        "OVERSEER_WORKSPACE": str(workspace),
        "OVERSEER_MODEL": "openai/scripted",
        "OVERSEER_API_BASE": model.openai_base,
        "OVERSEER_API_KEY": "scripted",
    }
    yield values, workspace, tmp_path / "data", model
    model.stop()


def restart_script(request: ModelRequest) -> Reply:
    """Stateless, so it serves both processes: call the tool once, then report its result."""
    results = request.tool_results()
    if not results:
        command = request.last_prompt()
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command}, id="c1")])
    return Reply(text=f"finished: {results[0].text}")


def wait_until(predicate, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


async def stored(data_dir: Path):
    async with SqliteStore(data_dir / "overseer.db") as store:
        [session] = await store.list_sessions()
        return (
            session,
            await store.list_approvals(session_id=session.id),
            await store.list_tool_calls(session.id),
            await store.list_messages(session.id),
        )


def test_a_pending_approval_survives_sigkill_and_the_tool_runs_exactly_once(env):
    values, workspace, data_dir, model = env
    first = HostProcess(["run", "echo ran >> count.txt", "--json"], values)
    approval = first.wait_for_event("approval.requested")["data"]
    first.kill()

    session, approvals, _, _ = asyncio.run(stored(data_dir))
    assert session.status == "waiting_approval"
    assert [(a.id, a.status) for a in approvals] == [(approval["id"], "pending")]
    assert not (workspace / "count.txt").exists()

    second = HostProcess(["resume", "--json", "--approve", "all"], values)
    assert second.finish() == 0, second.proc.stderr.read()

    session, approvals, calls, messages = asyncio.run(stored(data_dir))
    assert session.status == "completed"
    assert [(a.id, a.status) for a in approvals] == [(approval["id"], "allowed")]
    assert (workspace / "count.txt").read_text() == "ran\n"
    assert [c.status for c in calls] == ["done"]
    assert messages[-1].content.startswith("finished:")


def test_a_tool_running_at_the_crash_is_reported_interrupted_and_never_rerun(env):
    values, workspace, data_dir, model = env
    (data_dir).mkdir()
    (data_dir / "overseer.yaml").write_text("policies:\n  mcp__shell__exec: always_allow\n")
    first = HostProcess(["run", "echo start >> log.txt; sleep 3", "--json"], values)
    first.wait_for_event("tool.started")
    wait_until(lambda: (workspace / "log.txt").exists())
    first.kill()

    second = HostProcess(["resume", "--json"], values)
    assert second.finish() == 0, second.proc.stderr.read()

    session, _, calls, messages = asyncio.run(stored(data_dir))
    assert session.status == "completed"
    assert [c.status for c in calls] == ["interrupted"]
    assert "was not run again" in model.requests[-1].tool_results()[0].text
    assert (workspace / "log.txt").read_text().count("start") == 1
