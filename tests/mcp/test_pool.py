"""McpPool against real stdio subprocesses of tests/mcp/fixtures/echo_server.py.

The process boundary is what these tests are about, so each one spawns real servers. No
sleeps: every wait is on an event or a call, bounded by `anyio.fail_after`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from backend.domain.tools import ToolResult
from backend.mcp import McpPool, McpPoolError, ToolNotFound
from backend.mcp import server as server_module
from backend.mcp.config import MANAGED_ENV_VAR, McpServerConfig

EchoConfig = Callable[..., McpServerConfig]
BOUND = 30  # seconds; a bound on waits, never a timing assertion
ECHO_SERVER = Path(__file__).parent / "fixtures" / "echo_server.py"
REPO_ROOT = Path(__file__).resolve().parents[2]


def ws(tmp_path: Path) -> dict[str, Any]:
    return {"workspace": tmp_path, "session_id": "s1"}


def status(pool: McpPool, name: str):
    return next(s for s in pool.statuses() if s.name == name)


async def exited(pid: int) -> None:
    """Return once process `pid` has exited (its pidfd turns readable); the caller bounds the wait."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await anyio.wait_readable(fd)
    finally:
        os.close(fd)


async def test_tools_are_named_mcp_server_tool_and_keep_annotations(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        names = {tool.name for tool in pool.tools()}
        assert {"mcp__srv__echo", "mcp__srv__crash", "mcp__srv__sleep"} <= names
        echo = pool.tool("mcp__srv__echo")
        assert echo is not None
        assert (echo.server, echo.tool) == ("srv", "echo")
        assert echo.annotations.readOnlyHint is True
        assert echo.annotations.idempotentHint is True
        assert echo.annotations.title == "Echo"
        assert echo.input_schema["required"] == ["text"]
        crash = pool.tool("mcp__srv__crash")
        assert crash is not None and crash.annotations.destructiveHint is True
        assert pool.tool("mcp__srv__nope") is None
        assert pool.tool("not_mcp") is None


async def test_start_returns_at_once_and_servers_start_in_parallel(tmp_path: Path, echo_config: EchoConfig):
    pool = McpPool({"a": echo_config(), "b": echo_config()}, log_dir=tmp_path / "logs")
    try:
        await pool.start()
        # Spawning a Python MCP server takes most of a second; start() did not wait for it.
        assert [s.state for s in pool.statuses()] == ["starting", "starting"]
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        states = {s.name: s for s in pool.statuses()}
        assert states["a"].state == states["b"].state == "ready"
        assert states["a"].pid is not None and states["b"].pid is not None
        assert states["a"].pid != states["b"].pid
    finally:
        await pool.aclose()
    assert [s.state for s in pool.statuses()] == ["stopped", "stopped"]


async def test_bad_command_ends_in_error_while_another_server_works(tmp_path: Path, echo_config: EchoConfig):
    servers = {"bad": echo_config(command=str(tmp_path / "no-such-program")), "good": echo_config()}
    async with McpPool(servers, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        bad = status(pool, "bad")
        assert bad.state == "error"
        assert bad.error and "bad" in bad.error
        assert bad.pid is None
        assert status(pool, "good").state == "ready"
        assert all(tool.server == "good" for tool in pool.tools())
        result = await pool.call("mcp__good__echo", {"text": "hi"}, **ws(tmp_path))
        assert not result.is_error
        # A call to the broken server is something the model reads, not an exception.
        down = await pool.call("mcp__bad__echo", {"text": "hi"}, **ws(tmp_path))
        assert down.is_error


async def test_server_that_never_answers_fails_its_start_timeout(tmp_path: Path, python_config):
    # Reads stdin until it closes and never answers the handshake.
    silent = python_config("import sys; sys.stdin.read()", start_timeout=0.5)
    async with McpPool({"silent": silent}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        assert status(pool, "silent").state == "error"
        assert status(pool, "silent").error


async def test_server_exiting_during_start_reports_its_stderr(tmp_path: Path, python_config):
    dying = python_config("import sys; print('missing API key', file=sys.stderr); sys.exit(3)")
    async with McpPool({"dying": dying}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        dead = status(pool, "dying")
        assert dead.state == "error"
        assert dead.error is not None and "missing API key" in dead.error
        assert dead.restarts == 0


async def test_wait_ready_is_bounded(tmp_path: Path, python_config):
    silent = python_config("import sys; sys.stdin.read()", start_timeout=60)
    async with McpPool({"silent": silent}, log_dir=tmp_path / "logs") as pool:
        with pytest.raises(TimeoutError):
            await pool.wait_ready(timeout=0.2)


async def test_close_during_a_start_stops_the_process(tmp_path: Path, python_config):
    silent = python_config("import sys; sys.stdin.read()", start_timeout=600)
    pool = McpPool({"silent": silent}, log_dir=tmp_path / "logs")
    await pool.start()
    with anyio.fail_after(BOUND):  # far below the 600 s start timeout
        await pool.aclose()
    assert status(pool, "silent").state == "stopped"


async def test_call_to_a_starting_server_waits_for_it(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        assert status(pool, "srv").state == "starting"
        with anyio.fail_after(BOUND):
            result = await pool.call("mcp__srv__echo", {"text": "early"}, **ws(tmp_path))
        assert not result.is_error
        assert json.loads(result.text)["text"] == "early"


async def test_meta_carries_workspace_and_session_id(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            result = await pool.call(
                "mcp__srv__echo", {"text": "x"}, workspace=tmp_path / "w1", session_id="sess-7"
            )
        assert json.loads(result.text)["meta"] == {
            "overseer/workspace": str(tmp_path / "w1"),
            "overseer/session_id": "sess-7",
        }


async def test_only_managed_servers_are_told_they_are_managed(tmp_path: Path, echo_config: EchoConfig):
    servers = {"managed": echo_config(managed=True), "plain": echo_config(env={"GREETING": "hello"})}
    async with McpPool(servers, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            managed = await pool.call("mcp__managed__getenv", {"name": MANAGED_ENV_VAR}, **ws(tmp_path))
            plain = await pool.call("mcp__plain__getenv", {"name": MANAGED_ENV_VAR}, **ws(tmp_path))
            greeting = await pool.call("mcp__plain__getenv", {"name": "GREETING"}, **ws(tmp_path))
        assert (managed.text, plain.text, greeting.text) == ("1", "", "hello")


async def test_concurrent_sessions_share_one_process(tmp_path: Path, echo_config: EchoConfig):
    pids: list[int] = []
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:

        async def session(session_id: str) -> None:
            for _ in range(5):
                result = await pool.call("mcp__srv__pid", {}, workspace=tmp_path, session_id=session_id)
                pids.append(int(result.text))

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                for n in range(4):
                    tg.start_soon(session, f"s{n}")
        assert len(pids) == 20
        assert set(pids) == {status(pool, "srv").pid}


async def test_crash_fails_in_flight_calls_and_the_next_call_runs_on_a_new_process(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        results: dict[str, ToolResult] = {}

        async def long_call() -> None:
            results["sleep"] = await pool.call("mcp__srv__sleep", {"seconds": 600}, **ws(tmp_path))

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                tg.start_soon(long_call)
                # Returns once the sleep is running on the server: it is truly in flight.
                await pool.call("mcp__srv__wait_for_sleep", {}, **ws(tmp_path))
                old_pid = status(pool, "srv").pid
                results["crash"] = await pool.call("mcp__srv__crash", {}, **ws(tmp_path))
            for key in ("sleep", "crash"):
                assert results[key].is_error
                assert "crashed" in results[key].text
            after = await pool.call("mcp__srv__pid", {}, **ws(tmp_path))
        assert not after.is_error
        new_pid = int(after.text)
        assert new_pid != old_pid
        assert status(pool, "srv").pid == new_pid
        assert status(pool, "srv").restarts == 1
        assert status(pool, "srv").state == "ready"


async def test_a_crashed_servers_tools_stay_offered_and_the_next_call_waits_for_its_restart(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            old_pid = status(pool, "srv").pid
            crashed = await pool.call("mcp__srv__crash", {}, **ws(tmp_path))
            # Right after the crash, before the new process is up: the gate looks the tool up here,
            # and a miss would tell the model "Unknown tool" although it was told to call again.
            assert crashed.is_error
            assert status(pool, "srv").state == "starting"
            assert pool.tool("mcp__srv__pid") is not None
            assert "mcp__srv__pid" in {tool.name for tool in pool.tools()}
            after = await pool.call("mcp__srv__pid", {}, **ws(tmp_path))
        assert not after.is_error
        assert int(after.text) not in (old_pid, None)
        assert status(pool, "srv").state == "ready"


async def test_a_call_waiting_for_a_restart_that_fails_gets_an_error_saying_why(
    tmp_path: Path, echo_config: EchoConfig
):
    once = echo_config(args=[str(ECHO_SERVER), "--start-once", str(tmp_path / "started")])
    async with McpPool({"srv": once}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            assert (await pool.call("mcp__srv__crash", {}, **ws(tmp_path))).is_error
            assert pool.tool("mcp__srv__echo") is not None
            result = await pool.call("mcp__srv__echo", {"text": "x"}, **ws(tmp_path))
        assert result.is_error
        assert "not available" in result.text and "refusing to start a second time" in result.text
        assert status(pool, "srv").state == "error"
        assert pool.tool("mcp__srv__echo") is None


async def test_what_a_crashed_server_left_in_its_process_group_is_killed(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            child = int((await pool.call("mcp__srv__spawn_child", {}, **ws(tmp_path))).text)
            assert (await pool.call("mcp__srv__crash", {}, **ws(tmp_path))).is_error
            # The child sleeps for 600 s: only the host killing the server's group ends it in time.
            await exited(child)


async def test_a_server_that_stops_answering_is_killed_and_restarted_after_repeated_timeouts(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs", hang_after=3) as pool:
        results: dict[str, ToolResult] = {}

        async def pending_call() -> None:
            results["pending"] = await pool.call(
                "mcp__srv__sleep", {"seconds": 600}, timeout=BOUND, **ws(tmp_path)
            )

        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            old_pid = status(pool, "srv").pid
            assert old_pid is not None
            async with anyio.create_task_group() as tg:
                tg.start_soon(pending_call)
                await pool.call("mcp__srv__wait_for_sleep", {}, **ws(tmp_path))
                # Alive (no crash, stdout open) but answering nothing: a hung server.
                os.kill(old_pid, signal.SIGSTOP)
                timeouts = [
                    await pool.call("mcp__srv__echo", {"text": "x"}, timeout=0.3, **ws(tmp_path))
                    for _ in range(3)
                ]
            await exited(old_pid)
            after = await pool.call("mcp__srv__pid", {}, **ws(tmp_path))
        assert all(result.is_error and "timed out" in result.text for result in timeouts)
        assert ["stopped answering" in result.text for result in timeouts] == [False, False, True]
        # The call that was waiting on the hung server is told, not left to its own timeout.
        assert results["pending"].is_error and "stopped answering" in results["pending"].text
        assert not after.is_error and int(after.text) != old_pid
        srv = status(pool, "srv")
        assert (srv.state, srv.restarts) == ("ready", 1)
        assert srv.last_restart is not None and srv.last_restart.startswith("stopped answering")
        assert "stopped answering" in (tmp_path / "logs" / "srv.log").read_text()


async def test_killing_a_hung_shell_server_also_kills_the_command_it_was_running(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "pid")
    shell = McpServerConfig(
        command=sys.executable,
        args=["-m", "mcp_servers.shell", "--root", str(workspace)],
        env={"PYTHONPATH": str(REPO_ROOT)},
        cwd=str(REPO_ROOT),
        managed=True,
    )
    # Unconfined (as with `sandbox: off`): the command's pid must mean the same to this test as to
    # the host, which a PID namespace would not give; the sandbox's own teardown is tested in
    # tests/sandbox.
    on_ws = {"workspace": workspace, "session_id": "s1", "sandbox": {"unconfined": True}}
    async with McpPool({"shell": shell}, log_dir=tmp_path / "logs", hang_after=2) as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            server = status(pool, "shell").pid
            assert server is not None
            async with anyio.create_task_group() as tg:
                command = {"command": "echo $$ > pid; sleep 2; touch marker", "timeout": BOUND}
                tg.start_soon(partial(pool.call, "mcp__shell__exec", command, timeout=BOUND, **on_ws))
                # The fifo opens once the command writes it: it is running, its pid known.
                read_pid = (workspace / "pid").read_text
                command_pid = int(await anyio.to_thread.run_sync(read_pid, abandon_on_cancel=True))
                os.kill(server, signal.SIGSTOP)
                for _ in range(2):
                    await pool.call("mcp__shell__exec", {"command": "true"}, timeout=0.3, **on_ws)
        # Longer than the command needs: had it survived, its marker would exist by then.
        with anyio.fail_after(5):
            await exited(command_pid)
        assert not (workspace / "marker").exists()
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
        assert status(pool, "shell").last_restart == "stopped answering (2 calls in a row timed out)"


async def test_timeouts_with_an_answer_between_them_do_not_restart_the_server(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs", hang_after=2) as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            pid = status(pool, "srv").pid
            for _ in range(2):
                slow = await pool.call("mcp__srv__sleep", {"seconds": 600}, timeout=0.2, **ws(tmp_path))
                assert slow.is_error and "stopped answering" not in slow.text
                assert not (await pool.call("mcp__srv__echo", {"text": "x"}, **ws(tmp_path))).is_error
        assert (status(pool, "srv").pid, status(pool, "srv").restarts) == (pid, 0)


async def test_a_server_that_keeps_crashing_is_given_up(
    tmp_path: Path, echo_config: EchoConfig, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(server_module, "MAX_RESTARTS", 1)
    monkeypatch.setattr(server_module, "RESTART_BACKOFF", (0.0,))
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            for _ in range(2):
                assert (await pool.call("mcp__srv__crash", {}, **ws(tmp_path))).is_error
            await pool.wait_ready()
            assert status(pool, "srv").state == "error"
            assert status(pool, "srv").restarts == 1
            assert (await pool.call("mcp__srv__echo", {"text": "x"}, **ws(tmp_path))).is_error


async def test_call_timeout_returns_an_error_and_the_server_stays_usable(
    tmp_path: Path, echo_config: EchoConfig
):
    async with McpPool({"srv": echo_config(call_timeout=0.3)}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
            pid = status(pool, "srv").pid
            by_server_default = await pool.call("mcp__srv__sleep", {"seconds": 600}, **ws(tmp_path))
            by_call = await pool.call("mcp__srv__sleep", {"seconds": 600}, timeout=0.2, **ws(tmp_path))
            fine = await pool.call("mcp__srv__sleep", {"seconds": 0}, timeout=10, **ws(tmp_path))
        assert by_server_default.is_error and "timed out" in by_server_default.text
        assert by_call.is_error and "timed out" in by_call.text
        assert not fine.is_error
        assert status(pool, "srv").pid == pid
        assert status(pool, "srv").restarts == 0


async def test_big_result_is_cut_and_spilled_to_a_file(tmp_path: Path, echo_config: EchoConfig):
    workspace = tmp_path / "ws"
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs", spill_limit=1000) as pool:
        with anyio.fail_after(BOUND):
            small = await pool.call("mcp__srv__big", {"n": 1000}, workspace=workspace, session_id="s")
            cut = await pool.call(
                "mcp__srv__big", {"n": 5000}, workspace=workspace, session_id="s", call_id="call-1"
            )
    assert small.spilled_to is None and len(small.text) == 1000
    assert cut.spilled_to == ".overseer/spill/call-1.txt"
    assert cut.spilled_to in cut.text.splitlines()[-1]
    full = (workspace / cut.spilled_to).read_text()
    assert len(full) == 5000
    assert cut.text.startswith(full[:1000])
    assert len(cut.text.encode()) < 5000


async def test_tool_error_from_the_server_becomes_an_error_result(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            result = await pool.call("mcp__srv__fail", {"message": "disk full"}, **ws(tmp_path))
            bad_args = await pool.call("mcp__srv__sleep", {"seconds": "soon"}, **ws(tmp_path))
    assert result.is_error and "disk full" in result.text
    assert bad_args.is_error


async def test_image_content_is_collected(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            result = await pool.call("mcp__srv__image", {}, **ws(tmp_path))
    assert not result.is_error
    assert [image["mime_type"] for image in result.images] == ["image/png"]
    assert result.images[0]["data"]


async def test_unknown_tools_raise(tmp_path: Path, echo_config: EchoConfig):
    servers = {"srv": echo_config(), "off": echo_config(disabled=True)}
    async with McpPool(servers, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            for name in ("mcp__srv__nope", "mcp__other__echo", "echo", "mcp__off__echo"):
                with pytest.raises(ToolNotFound):
                    await pool.call(name, {}, **ws(tmp_path))
        assert status(pool, "off").state == "stopped"


async def test_calling_before_start_raises(tmp_path: Path, echo_config: EchoConfig):
    pool = McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs")
    with pytest.raises(McpPoolError):
        await pool.call("mcp__srv__echo", {"text": "x"}, **ws(tmp_path))


def test_server_names_that_break_tool_names_are_refused(tmp_path: Path, echo_config: EchoConfig):
    with pytest.raises(McpPoolError):
        McpPool({"a__b": echo_config()}, log_dir=tmp_path)


async def test_server_stderr_goes_to_its_log_file(tmp_path: Path, echo_config: EchoConfig):
    async with McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs") as pool:
        with anyio.fail_after(BOUND):
            await pool.wait_ready()
    # The fixture server writes this line to stderr before it serves.
    assert "echo server starting" in (tmp_path / "logs" / "srv.log").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process check")
async def test_aclose_stops_the_processes(tmp_path: Path, echo_config: EchoConfig):
    pool = McpPool({"srv": echo_config()}, log_dir=tmp_path / "logs")
    await pool.start()
    with anyio.fail_after(BOUND):
        await pool.wait_ready()
        pid = status(pool, "srv").pid
        assert pid is not None
        await pool.aclose()
    assert status(pool, "srv").state == "stopped"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
