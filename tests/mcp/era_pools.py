"""Pools that each run one fixture server in one protocol era: the handshake era (`--legacy`) and 2026-07-28."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool

ERAS = ("legacy", "modern")


@asynccontextmanager
async def era_pools(
    server: Path, name: str, root: Path, *, bound: float, **config: Any
) -> AsyncIterator[dict[str, McpPool]]:
    """era -> a started, ready pool running `server` (a real process) as `name`; `config`: more
    McpServerConfig fields (say a short call_timeout)."""
    made: dict[str, McpPool] = {}
    try:
        for era in ERAS:
            args = [str(server), *(["--legacy"] if era == "legacy" else [])]
            settings = McpServerConfig(command=sys.executable, args=args, start_timeout=bound, **config)
            pool = made[era] = McpPool({name: settings}, log_dir=root / era)
            await pool.start()
        for pool in made.values():
            await pool.wait_ready(timeout=bound)
        yield made
    finally:
        for pool in made.values():
            await pool.aclose()
