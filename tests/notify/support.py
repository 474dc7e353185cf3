"""A host with push notifications and the app that serves its answer links."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from backend.api.app import create_app
from backend.app.host import Host
from backend.channels.push import PushNotifier
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from backend.testing.harness import Harness, scripted_settings

PUBLIC_URL = "http://overseer.test"


@dataclass(kw_only=True)
class Served:
    """The harness, and a client of its app (no credentials: links carry their own)."""

    h: Harness
    web: httpx.AsyncClient

    @property
    def notifier(self) -> PushNotifier:
        [notifier] = [s for s in self.h.host.attached if isinstance(s, PushNotifier)]
        return notifier


@asynccontextmanager
async def push_host(
    root: Path, model: ScriptedModelServer, pool: McpPool, notify: dict[str, Any], **overrides: Any
) -> AsyncIterator[Served]:
    settings = scripted_settings(root, model, notify={"public_url": PUBLIC_URL, **notify}, **overrides)
    host = Host(settings, pool=pool)
    app = create_app(settings, host=host)  # attaches the notifier, serves /answer/...
    events = host.bus.subscribe(None)
    await host.start()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PUBLIC_URL) as web:
            yield Served(h=Harness(host=host, model=model, workspace=settings.resolved_workspace, events=events), web=web)
    finally:
        host.bus.unsubscribe(events)
        await host.aclose()
