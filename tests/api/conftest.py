"""An API client on the ASGI app, with the engine started and a scripted model behind it.

The host uses the suite's shared file + shell `pool` (tests/conftest.py), so a module using `api`
runs its tests on the module-wide event loop: `pytestmark = pytest.mark.asyncio(loop_scope="module")`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest_asyncio

from backend.api.app import create_app
from backend.app.host import Host
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
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model)
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
