"""Helpers the tool-server tests share (a plain module, so test files can import them)."""

from __future__ import annotations

import os
import select
from collections.abc import Callable
from pathlib import Path

from mcp import Client
from mcp_types import CallToolResult

SECRET = "TOP SECRET outside the workspace"
REPO_ROOT = Path(__file__).resolve().parents[2]

Connect = Callable[..., Client]
"""The shape of the `connect_file` / `connect_shell` fixtures: `connect(root=None, *, trust_meta=False)`."""


def text(result: CallToolResult) -> str:
    """The text of a tool result's single content block."""
    return result.content[0].text  # type: ignore[union-attr]


def process_exits_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` has exited, waiting at most `seconds` on its pidfd (no polling, no sleep)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
        return bool(readable)
    finally:
        os.close(fd)
