"""An API client on the ASGI app, with the engine started and a scripted model behind it."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

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


@pytest.fixture
async def api(tmp_path):
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model)
        host = Host(settings)
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
