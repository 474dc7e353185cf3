"""A host with the Telegram channel, against the fake Bot API server and the scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from backend.app.host import Host
from backend.auth import hash_password
from backend.channels import attach
from backend.channels.telegram import TelegramChannel
from backend.mcp.pool import McpPool
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import Harness, scripted_settings
from tests.channels.fake_bot_api import FakeBotApi

BOUND = 30  # seconds; a bound on waits, never a timing assertion
ANN, BOB, VIC, STRANGER = 111, 222, 333, 999
_HASH = hash_password("pw")
USERS = [
    {"username": "ann", "password_hash": _HASH, "role": "approver"},
    {"username": "bob", "password_hash": _HASH, "role": "admin"},
    {"username": "vic", "password_hash": _HASH, "role": "viewer"},
    {"username": "tester", "password_hash": _HASH, "role": "admin"},
]


def write_notes(request: ModelRequest) -> Reply:
    """Stateless (it serves a restarted host too): write notes.txt once, then say what came of it."""
    results = request.tool_results()
    if not results:
        call = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "hello"})
        return Reply(tool_calls=[call])
    verdict = "refused" if "denied" in results[-1].text else "written"
    return Reply(text=f"The note was {verdict}: {results[-1].text}")


def telegram_settings(api: FakeBotApi, **extra: Any) -> dict[str, Any]:
    return {
        "telegram": {
            "bot_token": api.token,
            "api_base": api.base,
            "users": {ANN: "ann", BOB: "bob", VIC: "vic"},
            "notify": ["ann"],
            "poll_timeout": 5,
            "edit_interval": 0.05,
            **extra,
        },
        "users": USERS,
    }


@asynccontextmanager
async def telegram_host(
    root: Path, model: ScriptedModelServer, api: FakeBotApi, pool: McpPool, **overrides: Any
) -> AsyncIterator[Harness]:
    """A started host (data under `root`) with its Telegram channel polling the fake server."""
    settings = scripted_settings(root, model, **telegram_settings(api), **overrides)
    host = Host(settings, pool=pool)
    attach(host.app_services)
    events = host.bus.subscribe(None)
    await host.start()
    try:
        await asyncio.wait_for(channel_of(host).polling.wait(), BOUND)
        yield Harness(host=host, model=model, workspace=settings.resolved_workspace, events=events)
    finally:
        host.bus.unsubscribe(events)
        await host.aclose()


def channel_of(host: Host) -> TelegramChannel:
    [channel] = [s for s in host.attached if isinstance(s, TelegramChannel)]
    return channel
