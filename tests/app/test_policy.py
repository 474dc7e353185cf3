"""Where "always allow" goes (backend/app/policy.py, through the approval door): a non-admin's is
one narrow rule kept for the session's workspace (or named agent), persisted in the data dir; a
tool-wide or global rule is an admin's (issue 31, item 2). Real host, real store, real file server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from backend.app.approvals import RuleNotPermitted
from backend.app.policy import SCOPED_RULES_FILE
from backend.auth import Principal
from backend.domain.models import Decision, StandingScope
from backend.domain.session_options import SessionOptions
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANN = Principal(name="ann", role="approver", kind="user")
ADMIN = Principal(name="root", role="admin", kind="user")
WRITE = "mcp__file__write_file"


def write(path: str, id: str = "w1") -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": "hi\n"}, id=id)


def global_allow(h: Harness) -> list[str]:
    config = h.host.settings.writable_config_file
    if not config.exists():
        return []
    return ((yaml.safe_load(config.read_text()) or {}).get("permissions") or {}).get("allow") or []


async def test_an_approvers_always_allow_on_a_write_keeps_only_that_path_for_that_workspace(tmp_path, pool):
    script = [
        Reply(tool_calls=[write("notes.txt")]),
        Reply(text="ok"),
        Reply(tool_calls=[write("notes.txt", id="w2")]),
        Reply(text="again"),
        Reply(tool_calls=[write("other.txt", id="w3")]),
        Reply(text="never"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        first = await h.start("write")
        approval = await h.next_approval()
        scope = StandingScope.of_session(h.workspace, None)
        assert approval.suggested_rules == [f"{WRITE}(./notes.txt)"]
        assert approval.always_scope == scope and approval.always_scope.label.startswith("workspace ")
        answered = await h.answer(approval, Decision(kind="allow_always"), by=ANN)
        assert answered.decision is not None
        assert (answered.decision.rules, answered.decision.scope) == ([f"{WRITE}(./notes.txt)"], "workspace")
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
        # Not the global policy: the config file and the rules for every session are untouched.
        assert global_allow(h) == [] and h.host.policies.engine.rules.allow == []
        assert h.host.policies.scoped_rule_texts(scope) == [f"{WRITE}(./notes.txt)"]
        saved = tmp_path / "data" / SCOPED_RULES_FILE
        assert json.loads(saved.read_text())["workspace"] == {scope.name: [f"{WRITE}(./notes.txt)"]}
        assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600

        # A later session in the same workspace writes that path unasked...
        again = await h.run("write again")
        assert again.status == "completed" and len(await h.host.store.list_approvals()) == 1
        # ...and is asked about any other path.
        other = await h.start("write another")
        asked = await h.next_approval()
        assert (asked.session_id, asked.arguments["path"]) == (other.id, "other.txt")
        await h.host.runner.stop(other.id)
        assert not (h.workspace / "other.txt").exists()


async def test_an_always_allow_kept_for_one_workspace_does_not_cover_a_session_in_another(tmp_path, pool):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok"), Reply(tool_calls=[write("notes.txt", id="w2")])]
    async with scripted_host(tmp_path, script, pool=pool, workspace_roots=[tmp_path]) as h:
        first = await h.start("write")
        await h.answer(await h.next_approval(), Decision(kind="allow_always"), by=ANN)
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
        other = await h.start("write there", SessionOptions(workspace=elsewhere))
        asked = await h.next_approval()
        assert asked.session_id == other.id
        assert asked.always_scope == StandingScope.of_session(elsewhere, None)
        await h.host.runner.stop(other.id)
        assert not (elsewhere / "notes.txt").exists()


async def test_an_approver_cannot_send_a_tool_wide_rule_or_a_global_scope(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        for rules in ([WRITE], ["Edit"], ["Edit(*.txt)"], ["mcp__file"]):
            with pytest.raises(RuleNotPermitted, match="only an admin"):
                await h.answer(approval, Decision(kind="allow_always", rules=rules), by=ANN)
        with pytest.raises(RuleNotPermitted, match="only an admin may allow a rule for every session"):
            await h.answer(approval, Decision(kind="allow_always", scope="global"), by=ANN)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        assert global_allow(h) == [] and not (tmp_path / "data" / SCOPED_RULES_FILE).exists()
        await h.host.runner.stop(session.id)


async def test_an_approver_cannot_always_allow_a_call_no_narrow_rule_covers(tmp_path, pool):
    # A folder is no narrow rule for a write: the whole workspace would be allowed.
    script = [Reply(tool_calls=[write(".")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        assert approval.suggested_rules == []
        with pytest.raises(RuleNotPermitted, match=f"only an admin may allow every call of {WRITE}; allow it once"):
            await h.answer(approval, Decision(kind="allow_always"), by=ANN)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.host.runner.stop(session.id)


async def test_an_admin_may_write_a_tool_wide_rule_for_every_session(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok"), Reply(tool_calls=[write("other.txt", id="w2")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        first = await h.start("write")
        answered = await h.answer(await h.next_approval(), Decision(kind="allow_always", rules=[WRITE]), by=ADMIN)
        assert answered.decision is not None and answered.decision.scope == "global"
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
        assert global_allow(h) == [WRITE]
        assert (await h.run("write another")).status == "completed"
        assert len(await h.host.store.list_approvals()) == 1


async def test_an_admin_may_keep_a_rule_for_this_workspace_but_not_name_another_scope(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        first = await h.start("write")
        approval = await h.next_approval()
        with pytest.raises(Exception, match="this session's own scope is its workspace"):
            await h.answer(approval, Decision(kind="allow_always", scope="agent"), by=ADMIN)
        await h.answer(approval, Decision(kind="allow_always", scope="workspace"), by=ADMIN)
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
        assert global_allow(h) == []
        assert h.host.policies.scoped_rule_texts(StandingScope.of_session(h.workspace, None)) == [f"{WRITE}(./notes.txt)"]


async def test_an_approvers_always_allow_survives_a_restart(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")], pool=pool) as h:
        first = await h.start("write")
        await h.answer(await h.next_approval(), Decision(kind="allow_always"), by=ANN)
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
    script = [
        Reply(tool_calls=[write("notes.txt", id="w2")]),
        Reply(text="unasked"),
        Reply(tool_calls=[write("other.txt", id="w3")]),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        assert (await h.run("write after the restart")).status == "completed"
        assert len(await h.host.store.list_approvals()) == 1
        other = await h.start("write another")
        assert (await h.next_approval()).session_id == other.id
        await h.host.runner.stop(other.id)


async def test_a_named_agents_sessions_keep_an_approvers_always_allow_for_the_agent(tmp_path, pool):
    docs = tmp_path / "docs"
    docs.mkdir()
    agents = [{"id": "docs", "workspace": str(docs)}]
    script = [
        Reply(tool_calls=[write("notes.txt")]),
        Reply(text="ok"),
        Reply(tool_calls=[write("notes.txt", id="w2")]),
        Reply(text="unasked"),
    ]
    async with scripted_host(tmp_path, script, pool=pool, agents=agents) as h:
        first = await h.start("write", SessionOptions(agent="docs"))
        approval = await h.next_approval()
        assert approval.always_scope == StandingScope(kind="agent", name="docs", label="agent docs")
        answered = await h.answer(approval, Decision(kind="allow_always"), by=ANN)
        assert answered.decision is not None and answered.decision.scope == "agent"
        assert (await h.host.runner.wait(first.id, timeout=30)).status == "completed"
        assert h.host.policies.scoped_rule_texts(approval.always_scope) == [f"{WRITE}(./notes.txt)"]
        assert (await h.run("again", SessionOptions(agent="docs"))).status == "completed"
        assert len(await h.host.store.list_approvals()) == 1
        assert (docs / "notes.txt").exists() and not Path(h.workspace / "notes.txt").exists()
