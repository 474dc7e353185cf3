"""GET /api/settings/rule-warnings: the rules that name a server or tool that does not exist here,
checked against the servers' listed tools as they are now (issue 35, item 12)."""

from __future__ import annotations

import pytest

from backend.config import PermissionsConfig
from tests.api.conftest import serve_api

pytestmark = pytest.mark.asyncio(loop_scope="module")

STALE_DENY = "mcp__memory__delete_entities"


async def test_the_settings_list_the_rules_that_cover_nothing_to_any_signed_in_user(tmp_path, pool):
    permissions = PermissionsConfig(
        deny=[STALE_DENY, "mcp__file__write_file(secrets/**)"],
        ask=["mcp__file__delete_everything"],
        allow=["mcp__github__list_issues", "mcp__memory-server__read_graph"],
    )
    servers = {"memory-server": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}
    async with serve_api(
        tmp_path, pool, permissions=permissions, mcp_servers=servers, deny_unmatched_ok=[STALE_DENY], builtin_servers=False
    ) as api:
        viewer = {"X-API-Key": api.app.state.auth.create_api_key("looker", role="viewer")}
        answer = await api.anonymous.get("/api/settings/rule-warnings", headers=viewer)
        refused = await api.anonymous.get("/api/settings/rule-warnings")

    assert answer.status_code == 200 and refused.status_code == 401
    found = {w["rule"]: w for w in answer.json()}
    # The shared pool's file server has listed its tools; memory-server is configured, not listed yet.
    assert sorted(found) == sorted([STALE_DENY, "mcp__file__delete_everything", "mcp__github__list_issues"])
    assert found[STALE_DENY]["level"] == "warning" and "deny_unmatched_ok" in found[STALE_DENY]["message"]
    assert "'memory-server'" in found[STALE_DENY]["message"]
    assert found["mcp__file__delete_everything"]["message"].endswith("server 'file' has no tool 'delete_everything'")
    assert {w["source"] for w in answer.json()} == {"user"}
