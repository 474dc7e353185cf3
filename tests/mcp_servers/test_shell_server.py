"""The shell tool server (mcp_servers/shell): exec in process, timeouts, the guard, one stdio boundary."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from test_guard import DANGEROUS
from tool_server_helpers import REPO_ROOT, Connect, process_exits_within, text

from backend.sandbox.launcher import Sandbox, detect
from backend.sandbox.profile import SandboxProfile
from mcp_servers._shared.limits import SHELL_OUTPUT_BYTES
from mcp_servers.shell import server as shell_server


async def test_exec_runs_in_the_workspace_and_reports_exit_code_zero(
    connect_shell: Connect, workspace: Path
) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "pwd -P"})
    assert not result.is_error
    assert text(result).splitlines() == [str(workspace), "[exit code 0]"]


async def test_exec_merges_stdout_and_stderr_in_order(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "echo one; echo two >&2; echo three"})
    assert text(result).splitlines()[:3] == ["one", "two", "three"]


async def test_nonzero_exit_is_an_error_result_with_the_code_and_output(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "echo partial; exit 7"})
    assert result.is_error
    assert text(result).splitlines() == ["partial", "[exit code 7]"]


async def test_long_output_keeps_its_tail_and_says_how_much_was_dropped(connect_shell: Connect) -> None:
    extra = 1234
    tail = "\nEND\n"
    command = f"head -c {SHELL_OUTPUT_BYTES + extra} /dev/zero | tr '\\0' a; echo; echo END"
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": command})
    lines = text(result).splitlines()
    # The kept tail is the limit in bytes: part of the a's, the newline, "END\n".
    assert lines[0].startswith(f"[{extra + len(tail)} bytes of earlier output dropped")
    assert lines[-2:] == ["END", "[exit code 0]"]
    assert len(lines[1]) == SHELL_OUTPUT_BYTES - len(tail)


async def test_timeout_kills_the_command_and_its_child_process(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool(
            "exec", {"command": "sleep 300 & echo child=$!; wait", "timeout": 0.5}
        )
    assert result.is_error
    match = re.search(r"child=(\d+)", text(result))
    assert match is not None, "the output so far must be returned"
    assert "timed out after 0.5 s" in text(result)
    assert process_exits_within(int(match.group(1)), seconds=10)


async def test_background_job_does_not_hold_the_call_until_the_timeout(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "sleep 60 & echo bg=$!", "timeout": 30})
    pid = int(re.search(r"bg=(\d+)", text(result)).group(1))  # type: ignore[union-attr]
    os.kill(pid, signal.SIGKILL)
    assert not result.is_error
    assert "[exit code 0]" in text(result)


async def test_concurrent_calls_run_at_the_same_time(connect_shell: Connect, workspace: Path) -> None:
    os.mkfifo(workspace / "rendezvous")
    async with connect_shell() as client:
        # The reader blocks until the writer runs: serialised calls would time out.
        reader, writer = await asyncio.gather(
            client.call_tool("exec", {"command": "cat rendezvous", "timeout": 20}),
            client.call_tool("exec", {"command": "echo met > rendezvous", "timeout": 20}),
        )
    assert not writer.is_error
    assert text(reader).splitlines() == ["met", "[exit code 0]"]


async def test_command_stdin_is_empty_not_the_mcp_transport(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "wc -c", "timeout": 10})
    assert text(result).splitlines() == ["0", "[exit code 0]"]


async def test_exec_refuses_a_workspace_that_does_not_exist(connect_shell: Connect, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    async with connect_shell(tmp_path / "missing") as client:
        result = await client.call_tool("exec", {"command": f"touch {marker}"})
    assert result.is_error
    assert not marker.exists()


async def test_managed_exec_refuses_a_meta_workspace_that_does_not_exist(
    connect_shell: Connect, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    async with connect_shell(trust_meta=True) as client:
        result = await client.call_tool(
            "exec", {"command": f"touch {marker}"}, meta={"overseer/workspace": str(tmp_path / "missing")}
        )
    assert result.is_error
    assert not marker.exists()


async def test_managed_exec_runs_in_the_meta_workspace(connect_shell: Connect, outside: Path) -> None:
    async with connect_shell(trust_meta=True) as client:
        result = await client.call_tool(
            "exec", {"command": "pwd -P"}, meta={"overseer/workspace": str(outside), **sandboxed(outside)}
        )
    assert text(result).splitlines()[0] == str(outside)


async def test_managed_exec_without_a_sandbox_runs_nothing(connect_shell: Connect, outside: Path) -> None:
    marker = outside / "ran"
    async with connect_shell(trust_meta=True) as client:
        result = await client.call_tool(
            "exec", {"command": f"touch {marker}"}, meta={"overseer/workspace": str(outside)}
        )
    assert result.is_error
    assert "no sandbox" in text(result)
    assert not marker.exists()


async def test_managed_exec_sees_only_its_workspace_in_the_sandbox(
    connect_shell: Connect, workspace: Path, outside: Path
) -> None:
    (workspace / "neighbour.txt").write_text("not yours")
    async with connect_shell(trust_meta=True) as client:
        result = await client.call_tool(
            "exec",
            {"command": f"cat {workspace}/neighbour.txt; touch {workspace}/x; echo done"},
            meta={"overseer/workspace": str(outside), **sandboxed(outside)},
        )
    assert "not yours" not in text(result)
    assert "done" in text(result)
    assert not (workspace / "x").exists()


async def test_a_read_only_refusal_tells_the_model_which_tool_asks(connect_shell: Connect, outside: Path) -> None:
    (outside / "AGENTS.md").write_text("be kind\n")
    profile = SandboxProfile(workspace=outside.resolve(), protected=(outside.resolve() / "AGENTS.md",), home=None)
    launch = Sandbox(detect("bwrap")).launch(profile)
    async with connect_shell(trust_meta=True) as client:
        result = await client.call_tool(
            "exec",
            {"command": "echo evil >> AGENTS.md"},
            meta={"overseer/workspace": str(outside), "overseer/sandbox": launch},
        )
    assert result.is_error
    assert "Read-only file system" in text(result) and "write_file" in text(result)
    assert (outside / "AGENTS.md").read_text() == "be kind\n"


def sandboxed(workspace: Path) -> dict[str, object]:
    """The `_meta` entry the host sends: the bubblewrap sandbox of this workspace."""
    profile = SandboxProfile(workspace=workspace.resolve(), home=None)
    return {"overseer/sandbox": Sandbox(detect("bwrap")).launch(profile)}


async def test_standalone_exec_ignores_the_meta_workspace(
    connect_shell: Connect, workspace: Path, outside: Path
) -> None:
    async with connect_shell(trust_meta=False) as client:
        result = await client.call_tool(
            "exec", {"command": "pwd -P"}, meta={"overseer/workspace": str(outside)}
        )
    assert text(result).splitlines()[0] == str(workspace)


async def test_empty_command_is_refused(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "   "})
    assert result.is_error


async def test_non_positive_timeout_is_rejected(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "true", "timeout": 0})
    assert result.is_error


@pytest.mark.parametrize("command", [command for command, _ in DANGEROUS])
async def test_dangerous_command_is_refused_before_anything_runs(
    connect_shell: Connect, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    started: list[str] = []

    async def must_not_run(command: str, *args: object, **kwargs: object) -> None:
        started.append(command)
        raise AssertionError("a refused command reached the runner")

    monkeypatch.setattr(shell_server, "run_command", must_not_run)
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": command})
    assert result.is_error
    assert started == []


async def test_exec_declares_destructive_open_world_annotations(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "exec"
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.open_world_hint is True
    assert tool.annotations.read_only_hint is False


async def test_stdio_shell_server_runs_commands_in_its_root(workspace: Path, outside: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.shell", "--root", str(workspace)],
        env={"PYTHONPATH": str(REPO_ROOT), "OVERSEER_MANAGED": "1"},
        cwd=REPO_ROOT,
    )
    async with Client(params) as client:
        (tool,) = (await client.list_tools()).tools
        default = await client.call_tool(
            "exec", {"command": "pwd -P; echo managed=${OVERSEER_MANAGED:-unset}"}, meta=sandboxed(workspace)
        )
        meta = await client.call_tool(
            "exec", {"command": "pwd -P"}, meta={"overseer/workspace": str(outside), **sandboxed(outside)}
        )
    assert tool.name == "exec" and tool.annotations.destructive_hint is True
    # The managed flag is the server's, not something commands inherit.
    assert text(default).splitlines() == [str(workspace), "managed=unset", "[exit code 0]"]
    assert text(meta).splitlines()[0] == str(outside)


async def test_command_killed_by_a_signal_is_an_error_naming_the_signal(connect_shell: Connect) -> None:
    async with connect_shell() as client:
        result = await client.call_tool("exec", {"command": "kill -TERM $$"})
    assert result.is_error
    assert text(result).splitlines()[-1] == f"[killed by signal {int(signal.SIGTERM)}]"


async def test_a_running_command_and_its_background_job_die_when_their_server_is_killed(
    workspace: Path,
) -> None:
    pids = workspace / "pids"
    os.mkfifo(pids)
    # Both the command and its background job leave a marker two seconds on, unless killed first.
    command = "(sleep 2; touch bg-marker) & echo $$ $! $PPID > pids; sleep 2; touch marker"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.shell", "--root", str(workspace)],
        env={"PYTHONPATH": str(REPO_ROOT)},
        cwd=REPO_ROOT,
    )

    async def run_until_the_server_dies(client: Client) -> None:
        with contextlib.suppress(Exception):
            await client.call_tool("exec", {"command": command, "timeout": 30})

    async with Client(params) as client, anyio.create_task_group() as tg:
        tg.start_soon(run_until_the_server_dies, client)
        with anyio.fail_after(30):
            # The fifo opens once the command writes it: it is running, its pids known.
            line = await anyio.to_thread.run_sync(pids.read_text, abandon_on_cancel=True)
        shell, job, server = map(int, line.split())
        os.kill(server, signal.SIGKILL)
        # Longer than the command needs: a survivor would have left its marker by then.
        assert process_exits_within(shell, seconds=5)
        assert process_exits_within(job, seconds=5)
        tg.cancel_scope.cancel()
    # Both processes that would write the markers are gone, so no marker can appear later.
    assert not (workspace / "marker").exists()
    assert not (workspace / "bg-marker").exists()
