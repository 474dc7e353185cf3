"""An API client on the ASGI app, with the engine started and a scripted model behind it.

The host uses the suite's shared file + shell `pool` (tests/conftest.py), so a module using `api`
runs its tests on the module-wide event loop: `pytestmark = pytest.mark.asyncio(loop_scope="module")`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from backend.api.app import create_app
from backend.app.host import Host
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings


@dataclass
class Api:
    client: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    host: Host
    model: ScriptedModelServer
    app: object


@pytest_asyncio.fixture(loop_scope="module")
async def api(tmp_path, pool):
    async with serve_api(tmp_path, pool) as started:
        yield started


@asynccontextmanager
async def serve_api(tmp_path: Path, pool: McpPool, **settings: Any) -> AsyncIterator[Api]:
    """The app on a started host with `settings` over the scripted ones; a token client and an anonymous one."""
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model, **settings)
        host = Host(settings, pool=pool)
        app = create_app(settings, host=host)
        await host.start()
        transport = httpx.ASGITransport(app=app)
        token = app.state.auth.token
        try:
            async with (
                httpx.AsyncClient(
                    transport=transport, base_url="http://test", headers={"Authorization": f"Bearer {token}"}
                ) as client,
                httpx.AsyncClient(transport=transport, base_url="http://test") as anonymous,
            ):
                yield Api(client=client, anonymous=anonymous, host=host, model=model, app=app)
        finally:
            await host.aclose()
