"""The auto-approve switch (backend/app/auto_approve.py): asks become allows in the name of who
turned it on, each with its audit row; deny rules still deny; approvals already waiting are
allowed only when the person says so. Real host, real store, real file and shell servers."""

from __future__ import annotations

import pytest

from backend.domain.session_options import SessionOptions
from backend.app.auto_approve import inside
from backend.app.session_edits import SessionEdit
from backend.auth import Principal
from backend.domain.models import Approval, Decision
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import only_servers, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANN = Principal(name="ann", role="approver", kind="user")
VIEWER = Principal(name="vic", role="viewer", kind="user")


def shell(command: str, id: str) -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command}, id=id)


async def switch(h, session_id: str, on: bool, *, approve_pending: bool = False, by: Principal = ANN):
    edit = SessionEdit(auto_approve=on, approve_pending=approve_pending)
    return await h.host.session_edits.edit(session_id, edit, by=by, via="rest")


async def test_asks_become_allows_in_the_name_of_who_turned_it_on_and_a_deny_rule_still_denies(tmp_path, pool):
    script = [
        Reply(tool_calls=[shell("echo one", "c1"), shell("rm -rf build", "c2")]),
        Reply(tool_calls=[shell("echo two", "c3")]),
        Reply(text="done"),
    ]
    permissions = {"deny": ["Bash(rm *)"]}
    async with scripted_host(tmp_path, script, pool=pool, permissions=permissions, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        on = await switch(h, session.id, True)
        assert on.auto_approve is not None and on.auto_approve.by.name == "ann"
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed"

        calls = {c.id: c for c in await h.host.store.list_tool_calls(session.id)}
        assert {i: c.status for i, c in calls.items()} == {"c1": "done", "c2": "denied", "c3": "done"}
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        for call_id in ("c1", "c3"):
            row = audit[call_id]
            assert (row.decision, row.decided_by) == ("allow", "user")
            assert (row.decider.name, row.decider.kind, row.decider.via) == ("ann", "user", "auto")
        assert (audit["c2"].decision, audit["c2"].decided_by, audit["c2"].decider.name) == ("deny", "rule", "overseer")
        approvals = await h.host.store.list_approvals(session_id=session.id)
        assert sorted(a.tool_call_id for a in approvals) == ["c1", "c3"]  # the denied call never asked
        assert all(a.decision and a.decision.message == "auto-approve, turned on by ann" for a in approvals)


async def test_approvals_already_waiting_are_allowed_only_when_the_person_says_so(tmp_path, pool):
    script = [Reply(tool_calls=[shell("echo a", "a1")]), Reply(tool_calls=[shell("echo b", "b1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(
            prompt="go", options=SessionOptions(created_by=ANN.decider("rest"))
        )
        waiting = await h.next_approval()
        await switch(h, session.id, True)  # not told to approve what waits
        assert (await h.host.store.get_approval(waiting.id)).status == "pending"
        await switch(h, session.id, True, approve_pending=True)
        assert (await h.host.broker.wait(waiting.id)).status == "allowed"
        # The next ask, made while the switch is on, is answered as it comes.
        later = await h.next_approval()
        answered = await h.host.broker.wait(later.id)
        assert (answered.status, answered.decider and answered.decider.via) == ("allowed", "auto")
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"


async def test_turned_off_it_answers_nothing_more(tmp_path, pool):
    script = [Reply(tool_calls=[shell("echo a", "a1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await switch(h, session.id, True)
        off = await switch(h, session.id, False)
        assert off.auto_approve is None
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        approval: Approval = await h.next_approval()
        assert await h.host.auto_approver.consider(approval) is False
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.host.runner.stop(session.id)


async def test_a_switch_turned_on_by_someone_without_the_approver_role_answers_nothing(tmp_path, pool):
    # Fails closed: the door refuses a viewer, so the ask stays with a person.
    script = [Reply(tool_calls=[shell("echo a", "a1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        from backend.domain.models import AutoApprove

        await h.host.runner.edit(session.id, lambda s: {"auto_approve": AutoApprove(by=VIEWER.decider("rest"))})
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        approval = await h.next_approval()
        assert await h.host.auto_approver.consider(approval) is False
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.host.runner.stop(session.id)


async def test_the_agent_changing_its_own_instructions_still_waits_for_a_person(tmp_path, pool):
    # The bootstrap guard's question (backend/rules/bootstrap_guard.py) is refused at the door
    # for an automatic answer: the switch leaves it pending, approve_pending too.
    write = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "AGENTS.md", "content": "obey"}, id="w1")
    script = [Reply(tool_calls=[write]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("file")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await switch(h, session.id, True)
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        approval = await h.next_approval()
        assert await h.host.auto_approver.consider(approval) is False
        await switch(h, session.id, True, approve_pending=True)
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        assert not (h.workspace / "AGENTS.md").exists()
        await h.host.runner.stop(session.id)


async def test_another_persons_message_starts_a_turn_that_asks_and_the_session_says_why(tmp_path, pool):
    bob = Principal(name="bob", role="approver", kind="user")
    script = [Reply(tool_calls=[shell("echo mine", "m1")]), Reply(text="ok"), Reply(tool_calls=[shell("echo bob", "b1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await switch(h, session.id, True)
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"  # ann's turn: unasked
        await h.host.runner.send(session.id, "now mine", author=bob.decider("rest"))
        while (approval := await h.next_approval()).tool_call_id != "b1":  # past ann's, answered
            pass
        notice = await h.next_event("notice", timeout=30)
        assert "bob (user, via rest)" in notice.data["text"] and "waits for a person" in notice.data["text"]
        assert (await h.host.store.get_approval(approval.id)).status == "pending"  # in the inbox, as usual
        messages = await h.host.store.list_messages(session.id)
        assert [m.author.name for m in messages if m.role == "user"] == ["ann", "bob"]
        await h.host.approvals.answer(approval.id, Decision(kind="allow_once"), by=bob, via="rest")
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        assert (audit["m1"].decider.name, audit["m1"].decider.via) == ("ann", "auto")
        assert (audit["b1"].decider.name, audit["b1"].decider.via) == ("bob", "rest")


async def test_a_workspace_edits_scope_allows_a_write_in_the_workspace_and_leaves_a_shell_command_to_the_person(tmp_path, pool):
    write = ScriptedToolCall(name="mcp__file__write_file", arguments={"path": "notes.txt", "content": "hi"}, id="w1")
    script = [Reply(tool_calls=[write]), Reply(tool_calls=[shell("echo hi", "s1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("file", "shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        edit = SessionEdit(auto_approve=True, scope="workspace_edits")
        on = await h.host.session_edits.edit(session.id, edit, by=ANN, via="rest")
        assert on.auto_approve is not None and on.auto_approve.scope == "workspace_edits"
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        written = await h.host.broker.wait((await h.next_approval()).id)
        assert (written.status, written.decider and written.decider.via) == ("allowed", "auto")
        command = await h.next_approval()
        assert command.tool_call_id == "s1"
        assert await h.host.auto_approver.consider(command) is False
        assert (await h.host.store.get_approval(command.id)).status == "pending"
        assert (h.workspace / "notes.txt").read_text() == "hi"
        await h.host.runner.stop(session.id)


async def test_a_workspace_edit_outside_the_workspace_is_out_of_the_edits_scope(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link").symlink_to(tmp_path)
    workspace = str(tmp_path / "ws")
    assert inside(workspace, "notes.txt") and inside(workspace, "sub/../a.txt") and inside(workspace, str(tmp_path / "ws" / "b"))
    for path in ("../x.txt", "/etc/passwd", "link/x.txt", "", None, "a\0b"):
        assert not inside(workspace, path), path


async def test_a_high_risk_command_asks_unless_the_person_included_high_risk(tmp_path, pool):
    script = [Reply(tool_calls=[shell("rm -f report-final.txt", "r1")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await switch(h, session.id, True)  # commands too, High risk not chosen
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        risky = await h.next_approval()
        assert await h.host.auto_approver.consider(risky) is False
        assert (await h.host.store.get_approval(risky.id)).status == "pending"

        edit = SessionEdit(auto_approve=True, approve_pending=True, high_risk=True)
        chosen = await h.host.session_edits.edit(session.id, edit, by=ANN, via="rest")
        assert chosen.auto_approve is not None and chosen.auto_approve.high_risk is True
        assert (await h.host.broker.wait(risky.id)).status == "allowed"
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        call = {c.id: c for c in await h.host.store.list_tool_calls(session.id)}["r1"]
        assert (call.status, call.decision) == ("done", "auto-approved by ann")
