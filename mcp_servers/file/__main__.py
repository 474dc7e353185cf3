"""`python -m mcp_servers.file --root DIR [--read-root DIR ...] [--data-dir DIR] [--checkpoints-dir DIR]`:
serve the file tools over stdio."""

import argparse
from pathlib import Path

from mcp_servers._shared.cli import ServerCommand
from mcp_servers.file.server import create_server

DESCRIPTION = (
    "Overseer file tool server: read, write, edit, list and search files in one workspace. "
    "Each --read-root adds a folder the reading tools also accept (by absolute path) but that is "
    "never written, e.g. --read-root ~/.overseer/skills so a model can load Overseer skills. "
    "--data-dir and --checkpoints-dir name Overseer's own folders, which no tool may reach, "
    "even inside the workspace (the host passes them)."
)


def add_file_arguments(parser: argparse.ArgumentParser) -> None:
    """`--read-root DIR`, repeatable; `--data-dir DIR` and `--checkpoints-dir DIR`, Overseer's own."""
    parser.add_argument(
        "--read-root",
        dest="read_roots",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder outside the workspace that may be read but not written (repeatable)",
    )
    for flag, what in (("--data-dir", "data dir"), ("--checkpoints-dir", "checkpoints dir")):
        parser.add_argument(
            flag, type=Path, default=None, metavar="DIR", help=f"Overseer's {what}: never read, written or listed"
        )


COMMAND = ServerCommand(name="file", factory=create_server, description=DESCRIPTION, add_arguments=add_file_arguments)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
