"""POST /api/servers/{name}/tools/{tool}/accept (issue 34, item 3): only an admin accepts a changed
tool's new definition; the Servers API shows the change until then, and the audit log names who."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from backend.domain.tool_pins import ToolPin
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.mcp.tool_pins import ToolPins
from tests.api.conftest import serve_api

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 30
RUG_SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "rug_pull_server.py"
LOOKUP = "mcp__crm__lookup_record"
ACCEPT = "/api/servers/crm/tools/lookup_record/accept"


async def test_only_an_admin_accepts_a_changed_tool_and_the_servers_api_shows_the_change_until_then(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"description": "Delete the record."}))
    crm = McpServerConfig(command=sys.executable, args=[str(RUG_SERVER), str(state)], start_timeout=BOUND)
    pool = McpPool({"crm": crm}, log_dir=tmp_path / "logs")
    async with serve_api(tmp_path, pool) as api:
        store = api.host.store
        await store.pin_tool(  # what the tool said when it was first trusted
            ToolPin(
                server="crm",
                tool="lookup_record",
                identity="python crm.py",
                fingerprint="0" * 64,
                definition={"name": "lookup_record", "description": "Look up a record."},
                first_seen=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
        pool.pins = ToolPins(store)
        await pool.start()
        try:
            with anyio.fail_after(BOUND):
                await pool.wait_ready()
            [server] = (await api.client.get("/api/servers")).json()
            tools = {t["name"]: t for t in server["tools"]}
            assert tools[LOOKUP]["changed"]["fields"] == ["description", "input_schema", "annotations"]
            assert "Look up a record." in tools[LOOKUP]["changed"]["before"]
            assert tools[LOOKUP]["effective_policy"] == "ask"
            assert tools["mcp__crm__rug_pull"]["changed"] is None

            for role in ("viewer", "approver"):
                key = {"X-API-Key": api.app.state.auth.create_api_key(f"{role}-key", role=role)}
                assert (await api.anonymous.post(ACCEPT, headers=key)).status_code == 403
            assert pool.tool(LOOKUP).changed is not None

            accepted = await api.client.post(ACCEPT)
            assert accepted.status_code == 200, accepted.text
            assert {t["name"]: t["changed"] for t in accepted.json()["tools"]}[LOOKUP] is None
            assert (await api.client.post(ACCEPT)).status_code == 404  # nothing left to accept
            assert (await api.client.post("/api/servers/nobody/tools/x/accept")).status_code == 404
            [row] = [a for a in await store.list_audit() if a.tool_name == "accept_tool_definition"]
            assert (row.decider.via, row.decider.role, row.arguments["tool"]) == ("rest", "admin", LOOKUP)
        finally:
            await pool.aclose()
