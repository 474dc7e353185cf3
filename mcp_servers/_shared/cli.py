"""The command line every built-in tool server shares: `python -m mcp_servers.<name> --root DIR`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, kw_only=True)
class ServerCommand:
    """`python -m mcp_servers.<name> --root DIR [options]`: how a command line becomes the server.

    The server is built with `factory(root, trust_meta=..., **options)`, where `options` are the
    parsed values of the arguments `add_arguments` declared, by their `dest` names.
    """

    name: str
    factory: Callable[..., MCPServer]
    description: str | None = None
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    takes_environ: bool = False
    """The factory also takes `environ`: the server hands its environment on (the shell's commands)."""

    def build(self, argv: Sequence[str] | None = None, *, environ: Mapping[str, str] = os.environ) -> MCPServer:
        """The server `argv` describes, for a process whose environment is `environ`.

        The test harness builds servers in memory with the environment the host would launch
        them with (backend/testing/in_process.py); a real process passes its own.
        """
        parser = argparse.ArgumentParser(
            prog=f"python -m mcp_servers.{self.name}", description=self.description or f"Overseer {self.name} tool server"
        )
        parser.add_argument(
            "--root", type=Path, default=Path.cwd(), help="workspace root (default: current directory)"
        )
        if self.add_arguments is not None:
            self.add_arguments(parser)
        options = vars(parser.parse_args(argv))
        root: Path = options.pop("root").expanduser().resolve()
        if not root.is_dir():
            parser.error(f"--root {root} is not a directory")
        if "host_url" in options:  # a thin client of the host: its URL and token come from `environ`
            options["host_url"] = options["host_url"] or environ.get(HOST_URL_ENV)
            options["token"] = environ.get(TOKEN_ENV)
        if self.takes_environ:
            options["environ"] = environ
        return self.factory(root, trust_meta=environ.get(MANAGED_ENV) == "1", **options)

    def run(self, argv: Sequence[str] | None = None) -> None:
        """Parse this process's command line, build the server and serve stdio."""
        self.build(argv).run()
