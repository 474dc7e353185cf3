"""`overseer mcp` as a real stdio subprocess: an embedded host, and the bridge to a running one.

What crosses the process boundary is what is tested here: progress, elicitation, cancellation and
the tools' results over stdin/stdout; for the bridge, over stdio and then HTTP to `/mcp`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import anyio
import mcp_types as wire
import pytest
from gateway_testkit import (
    BOUND,
    ProgressLog,
    accept,
    embedded_env,
    served_app,
    session_status,
    stdio_params,
    write_file,
)
from mcp import Client

from backend.store.sqlite import SqliteStore
from backend.testing import Reply, ScriptedModelServer
from backend.testing.process import REPO

# The bridge tests' hosts share the file + shell pool (tests/conftest.py), on the module's loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_over_stdio_an_approval_is_answered_with_answer_approval_and_the_answer_returns(tmp_path):
    with ScriptedModelServer([write_file(), Reply(text="wrote x.txt")]) as model:
        progress = ProgressLog()
        params = stdio_params(["mcp"], embedded_env(tmp_path, model))
        async with Client(params, mode="legacy") as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def invoke() -> None:
                        results.append(
                            await client.call_tool(
                                "invoke_agent", {"prompt": "w"}, progress_callback=progress
                            )
                        )

                    tg.start_soon(invoke)
                    approval_id = await progress.approval()
                    answered = await client.call_tool(
                        "answer_approval", {"id": approval_id, "decision": "allow_once"}
                    )
                    assert answered.structured_content["status"] == "allowed"
    assert results[0].content[0].text == "wrote x.txt"
    assert results[0].structured_content["status"] == "completed"
    assert (tmp_path / "workspace" / "x.txt").read_text() == "hi"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio_an_elicitation_answers_the_approval(tmp_path, mode):
    asked: list[str] = []

    async def allow(context, params):
        asked.append(params.message)
        return accept("allow_once")

    with ScriptedModelServer([write_file(), Reply(text="wrote x.txt")]) as model:
        params = stdio_params(["mcp"], embedded_env(tmp_path, model))
        async with Client(params, mode=mode, elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
    assert result.content[0].text == "wrote x.txt"
    assert len(asked) == 1 and "mcp__file__write_file" in asked[0]
    assert (tmp_path / "workspace" / "x.txt").read_text() == "hi"


async def test_over_stdio_cancelling_invoke_agent_stops_the_session(tmp_path):
    with ScriptedModelServer([write_file()]) as model:
        progress = ProgressLog()
        params = stdio_params(["mcp"], embedded_env(tmp_path, model))
        async with Client(params, mode="legacy") as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        lambda: client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
                    )
                    approval_id = await progress.approval()
                    tg.cancel_scope.cancel()
                # Still connected: the stop is the cancellation's doing, not the client leaving.
                # Each round trip below is the wait; the bound ends it.
                while not (
                    stopped := await client.call_tool("list_sessions", {"status": "stopped"})
                ).structured_content["sessions"]:
                    pass
                running = await client.call_tool("list_sessions", {"status": "running"})
    assert len(stopped.structured_content["sessions"]) == 1
    assert running.structured_content["sessions"] == []
    store = SqliteStore(tmp_path / "data" / "overseer.db")
    await store.open()
    try:
        assert (await store.get_approval(approval_id)).status == "cancelled"
    finally:
        await store.close()
    assert not (tmp_path / "workspace" / "x.txt").exists()


async def test_over_stdio_an_exposed_shell_call_waits_for_an_approval_then_runs(tmp_path):
    with ScriptedModelServer([]) as model:
        progress = ProgressLog()
        params = stdio_params(["mcp", "--expose-tools"], embedded_env(tmp_path, model))
        async with Client(params, mode="legacy") as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def call() -> None:
                        results.append(
                            await client.call_tool(
                                "mcp__shell__exec",
                                {"command": "echo gated > out.txt"},
                                progress_callback=progress,
                            )
                        )

                    tg.start_soon(call)
                    approval_id = await progress.approval()
                    assert not (tmp_path / "workspace" / "out.txt").exists()
                    await client.call_tool("answer_approval", {"id": approval_id, "decision": "allow_once"})
    assert results[0].is_error is False
    assert (tmp_path / "workspace" / "out.txt").read_text().strip() == "gated"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_through_the_bridge_an_elicitation_answers_the_hosts_approval(tmp_path, mode, pool):
    async def allow(context, params):
        return accept("allow_once")

    async with served_app(tmp_path, [write_file(), Reply(text="written")], pool=pool) as served:
        env = embedded_env(tmp_path / "client", served.model) | {"OVERSEER_TOKEN": served.token}
        params = stdio_params(["mcp", "--host-url", served.url], env)
        async with Client(params, mode=mode, elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
        (approval,) = await served.host.store.list_approvals()
    assert result.content[0].text == "written"
    assert (approval.status, approval.decided_by) == ("allowed", "user")
    assert (served.workspace / "x.txt").read_text() == "hi"


async def test_through_the_bridge_cancelling_invoke_agent_stops_the_hosts_session(tmp_path, pool):
    async with served_app(tmp_path, [write_file()], pool=pool) as served:
        progress = ProgressLog()
        env = embedded_env(tmp_path / "client", served.model) | {"OVERSEER_TOKEN": served.token}
        async with Client(stdio_params(["mcp", "--host-url", served.url], env), mode="auto") as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(
                        lambda: client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
                    )
                    approval_id = await progress.approval()
                    tg.cancel_scope.cancel()
                approval = await served.host.store.get_approval(approval_id)
                await session_status(served.host, approval.session_id, "stopped")
        assert (await served.host.store.get_approval(approval_id)).status == "cancelled"


async def run_cli(*args: str, env: dict[str, str], cwd: str | Path) -> tuple[int | None, bytes, bytes]:
    """`overseer ARGS` as a client starts it, to its end: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "backend.cli", *args,
        cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    with anyio.fail_after(BOUND):
        out, err = await proc.communicate()
    return proc.returncode, out, err


async def test_the_bridge_refuses_to_start_with_a_wrong_token_and_says_why(tmp_path, pool):
    async with served_app(tmp_path, pool=pool) as served:
        env = embedded_env(tmp_path / "client", served.model) | {"OVERSEER_TOKEN": "wrong"}
        returncode, out, err = await run_cli("mcp", "--host-url", served.url, env=env, cwd=REPO)
    assert returncode == 2
    assert out == b""
    assert b"401" in err


async def test_without_a_workspace_overseer_mcp_refuses_to_start_and_says_how_to_name_one(tmp_path):
    # Claude Desktop starts its servers in `/`: that was the agents' workspace, read without asking.
    with ScriptedModelServer() as model:
        env = embedded_env(tmp_path, model)
        del env["OVERSEER_WORKSPACE"]
        returncode, out, err = await run_cli("mcp", env=env, cwd="/")
    assert returncode == 2
    assert out == b""
    assert b"--workspace" in err and b"OVERSEER_WORKSPACE" in err
    assert not (tmp_path / "data").exists()


async def test_overseer_mcp_started_in_the_root_works_in_the_workspace_its_flag_names(tmp_path):
    async def allow(context, params):
        return accept("allow_once")

    with ScriptedModelServer([write_file(), Reply(text="wrote x.txt")]) as model:
        env = embedded_env(tmp_path, model)
        workspace = Path(env.pop("OVERSEER_WORKSPACE"))
        params = stdio_params(["mcp", "--workspace", str(workspace)], env, cwd=Path("/"))
        async with Client(params, mode="legacy", elicitation_callback=allow) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
    assert result.content[0].text == "wrote x.txt"
    assert (workspace / "x.txt").read_text() == "hi"
