"""Third-party stdio MCP servers confined by `sandbox:` in their config entry (issue 29)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.sandbox.launcher import SandboxStatus, SandboxUnavailable
from backend.sandbox.servers import ServerSandbox, server_argv

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "files_server.py"


def confined(workspace: Path, **extra: object) -> McpServerConfig:
    sandbox = ServerSandbox(writable=[str(workspace)], read_only=[sys.prefix, str(FIXTURE.parent)], **extra)  # type: ignore[arg-type]
    return McpServerConfig(command=sys.executable, args=[str(FIXTURE)], sandbox=sandbox)


async def test_a_confined_server_reaches_its_own_folders_and_nothing_else(tmp_path: Path) -> None:
    workspace, outside = (tmp_path / "ws").resolve(), (tmp_path / "outside").resolve()
    workspace.mkdir()
    outside.mkdir()
    (workspace / "mine.txt").write_text("its own")
    (outside / "secret.txt").write_text("not for it")
    async with McpPool({"files": confined(workspace)}, log_dir=tmp_path / "logs") as pool:
        await pool.wait_ready(timeout=60)

        async def call(tool: str, **arguments: str) -> tuple[bool, str]:
            result = await pool.call(f"mcp__files__{tool}", arguments, workspace=workspace, session_id="s")
            return result.is_error, result.text

        assert await call("read", path=str(workspace / "mine.txt")) == (False, "its own")
        refused, text = await call("read", path=str(outside / "secret.txt"))
        assert refused and "not for it" not in text
        assert (await call("write", path=str(workspace / "new.txt"), text="ok"))[0] is False
        assert (await call("write", path=str(outside / "new.txt"), text="no"))[0] is True
    assert (workspace / "new.txt").read_text() == "ok"
    assert not (outside / "new.txt").exists()


async def test_a_server_that_asks_for_a_sandbox_none_can_give_is_not_started(tmp_path: Path) -> None:
    status = SandboxStatus(backend="landlock", detail="Landlock")
    with pytest.raises(SandboxUnavailable, match="only bubblewrap confines servers"):
        server_argv(status, ServerSandbox(), "node", [], home=tmp_path / "home")


def test_a_server_keeps_the_network_only_when_its_entry_says_so(tmp_path: Path) -> None:
    from backend.sandbox.launcher import detect

    status = detect("bwrap")
    shut = server_argv(status, ServerSandbox(), sys.executable, ["-V"], home=tmp_path / "a")
    open_ = server_argv(status, ServerSandbox(network=True), sys.executable, ["-V"], home=tmp_path / "b")
    assert "--unshare-net" in shut and "--unshare-net" not in open_
    assert shut[-2:] == [sys.executable, "-V"]
    assert (tmp_path / "a").is_dir()
