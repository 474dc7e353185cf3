"""Fixtures shared by the tool-server tests: a workspace, a folder outside it, in-process clients."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tool_server_helpers import SECRET, Connect

from mcp_servers.file.server import create_server as create_file_server
from mcp_servers.shell.server import create_server as create_shell_server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace holding `a.txt` and `sub/b.txt`."""
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hello\nworld\n")
    (root / "sub" / "b.txt").write_text("bee\n")
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace, holding `secret.txt`: nothing here may be read or written."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder.resolve()


@pytest.fixture
def connect_file(workspace: Path) -> Connect:
    """Open an in-process client to a file server (standalone unless `trust_meta=True`)."""

    def connect(root: Path | None = None, *, trust_meta: bool = False) -> Client:
        return Client(create_file_server(root or workspace, trust_meta=trust_meta))

    return connect


@pytest.fixture
def connect_shell(workspace: Path) -> Connect:
    """Open an in-process client to a shell server (standalone unless `trust_meta=True`)."""

    def connect(root: Path | None = None, *, trust_meta: bool = False) -> Client:
        return Client(create_shell_server(root or workspace, trust_meta=trust_meta))

    return connect
