"""The real file and shell servers, started once per test module and shared by its hosts."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from backend.mcp.config import builtin_servers
from backend.mcp.pool import McpPool


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """Modules that use it run their tests on one module-wide event loop (the pool's)."""
    root = tmp_path_factory.mktemp("pool")
    configs = builtin_servers(root=root, python=sys.executable)
    async with McpPool({k: configs[k] for k in ("file", "shell")}, log_dir=root / "logs") as started:
        await started.wait_ready(timeout=60)
        yield started
