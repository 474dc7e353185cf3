"""`python -m mcp_servers.browser --root DIR`: serve the browser tools over stdio."""

import argparse
from pathlib import Path

from mcp_servers._shared.cli import ServerCommand
from mcp_servers.browser.server import create_server
from mcp_servers.browser.sessions import CHROMIUM_ENV, default_chromium


def add_browser_arguments(parser: argparse.ArgumentParser) -> None:
    """`--chromium`, `--headed` and `--navigation-timeout`."""
    parser.add_argument(
        "--chromium",
        type=Path,
        default=default_chromium(),
        metavar="PATH",
        help=f"the Chromium executable to drive (default: ${CHROMIUM_ENV}, else /usr/bin/chromium); "
        "no browser is ever downloaded",
    )
    parser.add_argument("--headed", action="store_true", help="show the browser window (default: headless)")
    parser.add_argument(
        "--navigation-timeout",
        type=_positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="how long a page may take to load, and an evaluate script to run (default: 30)",
    )


def _positive_seconds(text: str) -> float:
    seconds = float(text)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return seconds


COMMAND = ServerCommand(
    name="browser",
    factory=create_server,
    description="Overseer browser tool server: a real Chromium, driven through page outlines with refs",
    add_arguments=add_browser_arguments,
)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
