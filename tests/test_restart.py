"""Approvals survive a SIGKILL: a real host process is killed and a new one takes over."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from backend.store import SqliteStore
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import only_servers_env
from backend.testing.process import OverseerProcess


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
        **only_servers_env("shell"),  # the one server the script calls
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


def open_when_read(fifo: Path, timeout: float = 30):
    """Open a FIFO for writing; that returns the moment a command opens it to read."""
    opened: list = []
    opener = threading.Thread(target=lambda: opened.append(open(fifo, "w")), daemon=True)
    opener.start()
    opener.join(timeout)
    if not opened:
        raise AssertionError(f"nothing read {fifo} within {timeout} s")
    return opened[0]


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
    first = OverseerProcess(["run", "echo ran >> count.txt", "--json"], values)
    approval = first.wait_for_event("approval.requested")["data"]
    first.kill()

    session, approvals, _, _ = asyncio.run(stored(data_dir))
    assert session.status == "waiting_approval"
    assert [(a.id, a.status) for a in approvals] == [(approval["id"], "pending")]
    assert not (workspace / "count.txt").exists()

    second = OverseerProcess(["resume", "--json", "--approve", "all"], values)
    assert second.finish() == 0, second.output

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
    os.mkfifo(workspace / "gate.fifo")
    first = OverseerProcess(["run", "echo start >> log.txt; cat gate.fifo", "--json"], values)
    first.wait_for_event("tool.started")
    # The command is past its first step and blocked on the FIFO: the tool is mid-run.
    gate = open_when_read(workspace / "gate.fifo")
    first.kill()
    gate.close()

    second = OverseerProcess(["resume", "--json"], values)
    assert second.finish() == 0, second.output

    session, _, calls, messages = asyncio.run(stored(data_dir))
    assert session.status == "completed"
    assert [c.status for c in calls] == ["interrupted"]
    assert "was not run again" in model.requests[-1].tool_results()[0].text
    assert (workspace / "log.txt").read_text().count("start") == 1
