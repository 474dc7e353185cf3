"""The command line every built-in tool server shares: `python -m mcp_servers.<name> --root DIR`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from mcp.server.mcpserver import MCPServer

MANAGED_ENV = "OVERSEER_MANAGED"
HOST_URL_ENV = "OVERSEER_HOST_URL"
TOKEN_ENV = "OVERSEER_TOKEN"


def is_managed() -> bool:
    """Whether the Overseer host launched this process (and so its per-call `_meta` is trusted)."""
    return os.environ.get(MANAGED_ENV) == "1"


def add_host_arguments(parser: argparse.ArgumentParser) -> None:
    """`--host-url` for servers that are thin clients of a running Overseer host.

    The host sets OVERSEER_HOST_URL and OVERSEER_TOKEN for the servers it launches; standalone,
    the URL comes from this flag and the token from the environment (never from argv, where
    other users of the machine could read it).
    """
    parser.add_argument(
        "--host-url",
        default=os.environ.get(HOST_URL_ENV),
        help=f"the Overseer host's URL, e.g. http://127.0.0.1:8765 (default: ${HOST_URL_ENV}); "
        f"the API token is read from ${TOKEN_ENV}",
    )


def run_server(
    name: str,
    factory: Callable[..., MCPServer],
    argv: Sequence[str] | None = None,
    *,
    description: str | None = None,
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Parse `--root` (and the server's own options), build the server and serve stdio.

    The server is built with `factory(root, trust_meta=..., **options)`, where `options` are the
    parsed values of the arguments `add_arguments` declared, by their `dest` names.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m mcp_servers.{name}", description=description or f"Overseer {name} tool server"
    )
    parser.add_argument(
        "--root", type=Path, default=Path.cwd(), help="workspace root (default: current directory)"
    )
    if add_arguments is not None:
        add_arguments(parser)
    options = vars(parser.parse_args(argv))
    root: Path = options.pop("root").expanduser().resolve()
    if not root.is_dir():
        parser.error(f"--root {root} is not a directory")
    factory(root, trust_meta=is_managed(), **options).run()
