"""The approval door (backend/app/approvals.py): roles, narrow standing rules, principals, and no
ghost approvals after a restart. Real host, real store, real file and shell servers."""

from __future__ import annotations

import asyncio

import pytest

from backend.app.approvals import ApproverRequired, RuleInvalid, RuleNotPermitted
from backend.auth import Principal
from backend.domain.models import Decision
from backend.domain.errors import ApprovalClosed
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANN = Principal(name="ann", role="approver", kind="user")
ADMIN = Principal(name="root", role="admin", kind="user")
VIEWER = Principal(name="vic", role="viewer", kind="user")


def write(path: str = "notes.txt") -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "hi\n"}, id="w1")


def shell(command: str, id: str = "s1") -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command}, id=id)


async def test_a_pending_approval_the_rules_now_allow_is_closed_by_the_rule_after_a_restart(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(tool_calls=[write()])], pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
    # The person adds the allow rule and starts the host again.
    permissions = {"allow": ["mcp__file__write_file"]}
    async with scripted_host(tmp_path, [Reply(text="done")], pool=pool, permissions=permissions) as h:
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed"
        assert (h.workspace / "notes.txt").read_text() == "hi\n"
        closed = await h.host.store.get_approval(approval.id)
        assert (closed.status, closed.decided_by) == ("allowed", "rule")
        assert await h.host.broker.pending() == []
        with pytest.raises(ApprovalClosed):
            await h.answer(closed, Decision(kind="deny"), by=ANN)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "done"


async def test_a_pending_approval_the_rules_now_deny_is_closed_as_denied_after_a_restart(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(tool_calls=[write()])], pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
    permissions = {"deny": ["Edit(notes.txt)"]}
    async with scripted_host(tmp_path, [Reply(text="ok")], pool=pool, permissions=permissions) as h:
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        closed = await h.host.store.get_approval(approval.id)
        assert (closed.status, closed.decided_by) == ("denied", "rule")
        assert not (h.workspace / "notes.txt").exists()


async def test_an_approver_may_not_write_a_rule_broader_than_the_call_and_nothing_changes(tmp_path, pool):
    script = [Reply(tool_calls=[shell("ls -la")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("list")
        approval = await h.next_approval()
        for kind in ("allow_always", "allow_session"):
            for rules in (["mcp__shell__exec"], ["Bash"], ["mcp__shell__exec(*)"]):
                with pytest.raises(RuleNotPermitted) as refused:
                    await h.answer(approval, Decision(kind=kind, rules=rules), by=ANN)
                assert rules[0] in str(refused.value) and "mcp__shell__exec(ls -la)" in str(refused.value)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        assert h.host.policies.permissions.allow == []
        assert (await h.host.store.get_session(session.id)).session_rules == []
        config = h.host.settings.writable_config_file
        assert not config.exists() or "mcp__shell__exec" not in config.read_text()
        # The narrow rule it was offered is fine, kept for this workspace's sessions only.
        await h.answer(approval, Decision(kind="allow_always", rules=approval.suggested_rules), by=ANN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert not config.exists() or "mcp__shell__exec" not in config.read_text()
        assert approval.always_scope is not None
        assert h.host.policies.scoped_rule_texts(approval.always_scope) == ["mcp__shell__exec(ls -la)"]


async def test_an_admin_may_widen_a_standing_rule(tmp_path, pool):
    script = [Reply(tool_calls=[shell("ls")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("list")
        approval = await h.next_approval()
        await h.answer(approval, Decision(kind="allow_session", rules=["mcp__shell__exec(ls *)"]), by=ADMIN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (await h.host.store.get_session(session.id)).session_rules == ["mcp__shell__exec(ls *)"]


async def test_a_malformed_rule_is_refused_before_the_approval_closes(tmp_path, pool):
    script = [Reply(tool_calls=[shell("ls")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("list")
        approval = await h.next_approval()
        for kind in ("allow_session", "allow_always"):
            with pytest.raises(RuleInvalid, match="nosuch"):
                await h.answer(approval, Decision(kind=kind, rules=["nosuch(("]), by=ADMIN)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        assert (await h.host.store.get_session(session.id)).session_rules == []
        await h.answer(approval, Decision(kind="allow_once"), by=ANN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"


async def test_a_viewer_cannot_answer(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(tool_calls=[write()]), Reply(text="ok")], pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        with pytest.raises(ApproverRequired, match="approver"):
            await h.answer(approval, Decision(kind="allow_once"), by=VIEWER)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.host.runner.stop(session.id)


async def test_the_decision_names_its_principal_and_door_on_the_approval_and_the_audit_row(tmp_path, pool):
    script = [Reply(tool_calls=[write()]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.host.approvals.answer(
            (await h.next_approval()).id, Decision(kind="allow_once"), by=ANN, via="websocket"
        )
        assert approval.decider is not None
        assert (approval.decider.name, approval.decider.kind, approval.decider.via) == ("ann", "user", "websocket")
        await h.host.runner.wait(session.id, timeout=30)
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by, entry.decider.name, entry.decider.via) == (
            "allow",
            "user",
            "ann",
            "websocket",
        )


async def test_a_decision_by_a_rule_names_overseer(tmp_path, pool):
    script = [Reply(tool_calls=[write()]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, permissions={"allow": ["mcp__file__write_file"]}) as h:
        await h.run("write")
        [entry] = await h.host.store.list_audit()
        assert (entry.decided_by, entry.decider.kind, entry.decider.name) == ("rule", "system", "overseer")


BOB = Principal(name="bob", role="approver", kind="user")


async def test_an_answer_sent_again_by_its_approver_returns_the_approval_as_decided_and_the_tool_runs_once(
    tmp_path, pool
):
    # Issue 31, item 12: a POST whose response was lost to a dropped connection is sent again.
    script = [Reply(tool_calls=[shell("echo ran >> runs.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("run")
        approval = await h.next_approval()
        first = await h.answer(approval, Decision(kind="allow_once", message="go"), by=ANN)
        again = await h.answer(approval, Decision(kind="allow_once", message="go "), by=ANN)
        by_link = await h.host.approvals.answer(
            approval.id, Decision(kind="allow_once", message="go"), by=ANN, via="channel"
        )
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert again == first and by_link == first
        assert (first.status, first.decider.name, first.decider.via) == ("allowed", "ann", "rest")
        assert (h.workspace / "runs.txt").read_text() == "ran\n"
        assert [r.status for r in await h.host.store.list_tool_calls(session.id)] == ["done"]


async def test_the_same_answer_sent_twice_at_once_closes_the_approval_once_and_both_get_it(tmp_path, pool):
    script = [Reply(tool_calls=[shell("echo ran >> runs.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("run")
        approval = await h.next_approval()
        both = await asyncio.gather(*(h.answer(approval, Decision(kind="allow_once"), by=ANN) for _ in range(2)))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert both[0] == both[1] and both[0].status == "allowed"
        assert (h.workspace / "runs.txt").read_text() == "ran\n"


async def test_always_allow_sent_again_with_its_narrow_rule_left_implicit_or_named_is_the_same_answer(tmp_path, pool):
    script = [Reply(tool_calls=[shell("ls -la")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("list")
        approval = await h.next_approval()
        first = await h.answer(approval, Decision(kind="allow_always"), by=ANN)
        implicit = await h.answer(approval, Decision(kind="allow_always"), by=ANN)
        named = await h.answer(approval, Decision(kind="allow_always", rules=first.decision.rules), by=ANN)
        assert implicit == first and named == first
        with pytest.raises(ApprovalClosed):  # another rule is another answer
            await h.answer(approval, Decision(kind="allow_always", rules=["mcp__shell__exec(ls *)"]), by=ADMIN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"


async def test_a_different_answer_or_another_approver_to_a_closed_approval_is_refused_naming_who_decided_what(
    tmp_path, pool
):
    script = [Reply(tool_calls=[shell("echo ran >> runs.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("run")
        approval = await h.next_approval()
        await h.answer(approval, Decision(kind="allow_once"), by=ANN)
        different = [
            (Decision(kind="deny"), ANN),
            (Decision(kind="allow_once", message="careful"), ANN),
            (Decision(kind="allow_once", updated_arguments={"command": "echo other >> runs.txt"}), ANN),
            (Decision(kind="allow_session"), ANN),
            (Decision(kind="allow_once"), BOB),
        ]
        for decision, by in different:
            with pytest.raises(ApprovalClosed) as refused:
                await h.answer(approval, decision, by=by)
            assert str(refused.value) == (
                f"approval {approval.id} is already allowed: ann (user, via rest) answered allow_once"
            )
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (h.workspace / "runs.txt").read_text() == "ran\n"
        closed = await h.host.store.get_approval(approval.id)
        assert (closed.decision.kind, closed.decider.name) == ("allow_once", "ann")
