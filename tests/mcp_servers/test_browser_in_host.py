"""The browser server as the host runs it: pooled, behind the gate, asking before it navigates."""

from __future__ import annotations

import browser_fixtures
from browser_fixtures import SiteServer

from backend.domain.models import Decision
from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

site = browser_fixtures.site


async def test_navigate_waits_for_approval_and_the_page_text_reaches_the_model(tmp_path, site: SiteServer) -> None:
    def snapshot_after_navigate(request: ModelRequest) -> Reply:
        assert "Title: Overseer test site" in request.last_tool_results()[0]
        return Reply(tool_calls=[ScriptedToolCall(name="mcp__browser__snapshot", arguments={})])

    script = [
        Reply(tool_calls=[ScriptedToolCall(name="mcp__browser__navigate", arguments={"url": site.url("index.html")})]),
        snapshot_after_navigate,
        Reply(text="read the page"),
    ]
    async with scripted_host(tmp_path, script) as h:
        session = await h.start("look at the test site")
        approval = await h.next_approval(timeout=30)
        assert approval.tool_name == "mcp__browser__navigate"
        assert approval.annotations.openWorldHint is True
        await h.answer(approval, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=60)
        assert done.status == "completed"
        records = {r.name: r for r in await h.host.store.list_tool_calls(session.id)}
        # Looking at the page it is on runs without asking.
        assert records["mcp__browser__snapshot"].decision == "policy mcp__browser__snapshot = always_allow (default)"
        assert "Overseer test site" in (records["mcp__browser__snapshot"].result or "")
        h.model.assert_all_used()
