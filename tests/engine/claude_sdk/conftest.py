"""Fixtures of the Claude Agent SDK engine tests: one real file + shell pool per module, and a
look at the processes the bundled Claude Code CLI runs as."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from backend.mcp.config import builtin_servers
from backend.mcp.pool import McpPool

CLI_MARK = b"claude_agent_sdk/_bundled/claude"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """The real file and shell servers, started once and shared by every host in a module."""
    root = tmp_path_factory.mktemp("pool")
    configs = builtin_servers(root=root, python=sys.executable)
    async with McpPool({k: configs[k] for k in ("file", "shell")}, log_dir=root / "logs") as started:
        await started.wait_ready(timeout=60)
        yield started


def children_of(pid: int) -> list[int]:
    """Direct child processes, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def cmdline(pid: int) -> list[bytes]:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes()).split(b"\0")
    except OSError:
        return []


def _cli_processes() -> list[int]:
    return [pid for pid in children_of(os.getpid()) if any(CLI_MARK in part for part in cmdline(pid))]


@pytest.fixture
def cli_processes() -> Callable[[], list[int]]:
    """Lists the Claude Code CLI processes this test process runs right now."""
    return _cli_processes


@pytest.fixture
def process_tree() -> Callable[[int], list[int]]:
    """Lists a process's children."""
    return children_of


@pytest.fixture
def process_cmdline() -> Callable[[int], list[bytes]]:
    """Reads a process's command line."""
    return cmdline
