"""A Host wired to the scripted model server, for tests and benchmarks.

Everything is real except the model: the store, the event bus, the gate, the MCP pool and its
servers. The model is reached over HTTP through LiteLLM, as a real provider would be. The file,
memory, cron and invoke_agent servers run in memory (backend/testing/in_process.py) unless a test
asks for processes (`in_process=False`): a stdio start costs an interpreter.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.auth import Principal
from backend.config import Settings
from backend.domain.models import Approval, Decision, Session
from backend.domain.session_options import SessionOptions
from backend.engine.events import Subscription
from backend.app.host import Host
from backend.mcp.config import BUILTIN_SERVERS, McpServerConfig
from backend.mcp.pool import McpPool
from backend.mcp.remote import open_transport
from backend.testing.in_process import in_process_transport
from backend.testing.model_server import ScriptedModelServer
from backend.testing.script import Script

SCRIPTED_MODEL = "openai/scripted"
TEST_PERSON = Principal(name="tester", role="admin", kind="user")


@dataclass(kw_only=True)
class Harness:
    """A running host, its scripted model and its workspace."""

    host: Host
    model: ScriptedModelServer
    workspace: Path
    events: Subscription

    async def run(
        self, prompt: str, options: SessionOptions | None = None, *, timeout: float = 30
    ) -> Session:
        """Start a session made with `options` and wait (bounded) for it to end."""
        session = await self.host.runner.create(options=options, prompt=prompt)
        return await self.host.runner.wait(session.id, timeout=timeout)

    async def start(self, prompt: str, options: SessionOptions | None = None) -> Session:
        """Start a session made with `options`; do not wait."""
        return await self.host.runner.create(options=options, prompt=prompt)

    async def next_event(self, type_: str, *, timeout: float = 15) -> Any:
        """The next event of that type (any session), waiting at most `timeout` seconds."""
        while True:
            event = await self.events.get(timeout=timeout)
            if event.type == type_:
                return event

    async def next_approval(self, *, timeout: float = 15) -> Approval:
        return Approval.model_validate((await self.next_event("approval.requested", timeout=timeout)).data)

    async def answer(self, approval: Approval, decision: Decision, *, by: Principal = TEST_PERSON) -> Approval:
        """Answer as a person would, through the approval door (as an admin unless `by` says)."""
        return await self.host.approvals.answer(approval.id, decision, by=by, via="rest")


def only_servers(*names: str) -> dict[str, McpServerConfig]:
    """`mcp_servers` entries that switch off every built-in server but `names`.

    Each built-in server that runs as a process imports the MCP SDK (about two seconds of CPU); a
    test that drives a whole host starts only the servers its script calls.
    """
    return {name: McpServerConfig(command="off", disabled=True) for name in BUILTIN_SERVERS if name not in names}


def only_servers_env(*names: str) -> dict[str, str]:
    """The same for an `overseer` process or `main()`: its environment's OVERSEER_MCP_SERVERS."""
    entries = {name: config.model_dump(include={"command", "disabled"}) for name, config in only_servers(*names).items()}
    return {"OVERSEER_MCP_SERVERS": json.dumps(entries)}


def scripted_settings(root: Path, server: ScriptedModelServer, **overrides: Any) -> Settings:
    """Settings for a host under `root`, pointed at the scripted model."""
    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    values: dict[str, Any] = {
        "data_dir": root / "data",
        "workspace": workspace,
        "model": SCRIPTED_MODEL,
        "api_base": server.openai_base,
        "api_key": "scripted-key",
        "retry_backoff": 0.01,
        **overrides,
    }
    return Settings(**values)


@asynccontextmanager
async def scripted_host(
    root: Path,
    script: Script | None = None,
    *,
    pool: McpPool | None = None,
    for_model: Callable[[ScriptedModelServer], dict[str, Any]] | None = None,
    in_process: bool = True,
    **overrides: Any,
) -> AsyncIterator[Harness]:
    """A started Host whose model is a ScriptedModelServer running `script`.

    `for_model(server)` gives settings that depend on the server (its Anthropic URL, ...).
    `in_process=False`: the host's own pool starts every server as a process, as in production.
    """
    with ScriptedModelServer(script) as model:
        settings = scripted_settings(root, model, **overrides, **(for_model(model) if for_model else {}))
        host = Host(settings, pool=pool, transport_factory=in_process_transport if in_process else open_transport)
        await host.start()
        events = host.bus.subscribe(None)
        try:
            yield Harness(host=host, model=model, workspace=settings.resolved_workspace, events=events)
        finally:
            host.bus.unsubscribe(events)
            await host.aclose()
