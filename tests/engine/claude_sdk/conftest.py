"""Fixtures of the Claude Agent SDK engine tests: a look at the processes the bundled Claude Code
CLI runs as (the shared file + shell `pool` comes from tests/engine/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


CLI_MARK = b"claude_agent_sdk/_bundled/claude"


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
