"""The command line every built-in tool server shares: `python -m mcp_servers.<name> --root DIR`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from mcp.server.mcpserver import MCPServer

MANAGED_ENV = "OVERSEER_MANAGED"


def is_managed() -> bool:
    """Whether the Overseer host launched this process (and so its per-call `_meta` is trusted)."""
    return os.environ.get(MANAGED_ENV) == "1"


def run_server(
    name: str,
    factory: Callable[..., MCPServer],
    argv: Sequence[str] | None = None,
) -> None:
    """Parse `--root`, build the server with `factory(root, trust_meta=...)` and serve stdio."""
    parser = argparse.ArgumentParser(
        prog=f"python -m mcp_servers.{name}", description=f"Overseer {name} tool server"
    )
    parser.add_argument(
        "--root", type=Path, default=Path.cwd(), help="workspace root (default: current directory)"
    )
    args = parser.parse_args(argv)
    root: Path = args.root.expanduser().resolve()
    if not root.is_dir():
        parser.error(f"--root {root} is not a directory")
    factory(root, trust_meta=is_managed()).run()
