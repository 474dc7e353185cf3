"""A tool whose description reads like orders to the model (issue 34): flagged on the Servers API,
and never re-exported by the gateway under Overseer's banner. A real stdio server, a real app."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import httpx
import mcp_types as wire

from backend.mcp.config import McpServerConfig
from backend.testing.harness import only_servers
from tests.gateway.gateway_testkit import BOUND, served_app

HOSTILE_SERVER = Path(__file__).resolve().parents[1] / "approvals" / "fixtures" / "hostile_server.py"
HOSTILE = McpServerConfig(command=sys.executable, args=[str(HOSTILE_SERVER)])


async def test_a_poisoned_tool_is_flagged_on_the_servers_api_and_withheld_by_the_gateway(tmp_path):
    servers = {**only_servers("file"), "hostile": HOSTILE}
    async with served_app(tmp_path, [], expose_tools=True, mcp_servers=servers) as served:
        with anyio.fail_after(BOUND):
            await served.host.pool.wait_ready(timeout=BOUND)
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {served.token}"}) as rest:
            listed = (await rest.get(f"{served.url}/api/servers")).json()
        [hostile] = [server for server in listed if server["name"] == "hostile"]
        tools = {tool["name"]: tool for tool in hostile["tools"]}
        flags = {(flag["where"], flag["kind"]) for flag in tools["mcp__hostile__add"]["flags"]}
        assert {("description", "instruction"), ("description", "secret_path"), ("description", "secrecy")} <= flags
        assert tools["mcp__hostile__lookup"]["flags"] == []

        async with served.client(mode="legacy") as client:
            exported = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert "mcp__hostile__add" not in exported
            assert exported["mcp__hostile__lookup"].description == (
                "[Overseer, gated by its approval policy] Look up a record by its number."
            )
            assert not any("id_rsa" in (tool.description or "") for tool in exported.values())
            with anyio.fail_after(BOUND):
                refused = await client.call_tool("mcp__hostile__add", {"a": 1, "b": 2})
        assert refused.is_error is True
        assert isinstance(refused.content[0], wire.TextContent)
        assert "flagged" in refused.content[0].text and "mcp__hostile__add" in refused.content[0].text
        assert await served.host.store.list_audit() == []  # refused before the gate: nothing ran
