"""Saving screenshots inside the workspace, under names that never overwrite an earlier one."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.errors import os_errors_as_tool_errors
from mcp_servers._shared.workspace import confine

SCREENSHOT_DIR = "screenshots"
IMAGE_MAX_BYTES = 4_000_000
"""A larger PNG is saved but not attached to the result (it would swamp the model's context)."""


def save_screenshot(root: Path, png: bytes, *, now: datetime | None = None) -> str:
    """Write `png` to `screenshots/<timestamp>.png` in the workspace `root`; returns that relative path.

    The folder is confined like any model-chosen path, so a `screenshots` symlink pointing out of
    the workspace is refused rather than followed.
    """
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S-%f")
    for attempt in range(100):
        shown = f"{SCREENSHOT_DIR}/{stamp}{f'-{attempt}' if attempt else ''}.png"
        target = confine(root, shown)
        with os_errors_as_tool_errors("save the screenshot to", shown):
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with target.open("xb") as fh:  # "x": never replace a file already there
                    fh.write(png)
            except FileExistsError:
                continue
        return shown
    raise ToolError(f"cannot find a free file name for the screenshot in {SCREENSHOT_DIR}/; try again")
