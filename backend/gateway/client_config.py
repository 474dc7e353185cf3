"""`overseer mcp-config claude-desktop|claude-code`: the JSON that makes Overseer one of a client's servers.

Clients start servers with a bare environment and an unknown working directory, so the command
is an absolute path (this installation's `overseer`, else this Python with `-m backend.cli`)
and the data dir, when chosen, is passed explicitly. No secret is written into the snippet: the
bridge reads the host's token from the data dir; on another machine, add OVERSEER_TOKEN to `env`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

ClientName = Literal["claude-desktop", "claude-code"]
SERVER_NAME = "overseer"


def overseer_command() -> list[str]:
    """How to start this installation's `overseer`, as an absolute command line."""
    script = Path(sys.executable).parent / "overseer"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "backend.cli"]


def client_config(
    client: ClientName,
    *,
    data_dir: Path | None = None,
    host_url: str | None = None,
    expose_tools: bool = False,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """`{"mcpServers": {"overseer": {...}}}` for `client`: Claude Desktop's config file and
    Claude Code's `.mcp.json` (or `claude mcp add-json overseer '<the inner object>'`)."""
    command = overseer_command()
    args = command[1:]
    if data_dir is not None:
        args += ["--data-dir", str(data_dir.expanduser().resolve())]
    args.append("mcp")
    if host_url:
        args += ["--host-url", host_url]
    if expose_tools:
        args.append("--expose-tools")
    server: dict[str, Any] = {"command": command[0], "args": args, "env": dict(env or {})}
    if client == "claude-code":
        server = {"type": "stdio", **server}
    return {"mcpServers": {SERVER_NAME: server}}
