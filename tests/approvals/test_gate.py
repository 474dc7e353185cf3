"""The gate end to end: rules, approvals, decisions, audit, stop, with real tool servers."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
import yaml

from backend.domain.models import Approval, Decision
from backend.approvals.tool_hooks import Block, HookChain, ToolHooks
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

# The shared file + shell pool (tests/conftest.py) runs on the module's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")


def write(path: str, content: str = "hello\n", id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": content}, id=id)


async def test_denied_tool_never_reaches_the_server(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, permissions={"deny": ["Edit(notes.txt)"]}, pool=pool) as h:
        session = await h.run("write")
        assert session.status == "completed"
        assert not (h.workspace / "notes.txt").exists()
        assert "Denied" in h.model.requests[-1].tool_results()[0].text
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by) == ("deny", "rule")
        assert "Edit(notes.txt)" in entry.detail


async def test_a_rule_denied_call_is_announced_with_its_arguments_and_the_rule(tmp_path, pool):
    rm = ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "rm -f x"})
    script = [Reply(tool_calls=[rm]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, permissions={"deny": ["Bash(rm *)"]}, pool=pool) as h:
        session = await h.run("clean up")
        [event] = [e for e in await h.host.store.list_events(session.id) if e.type == "tool.result"]
        assert event.data["status"] == "denied"
        assert event.data["arguments"] == {"command": "rm -f x"}
        assert event.data["decision"] == "Denied by rule Bash(rm *)"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.decision == "Denied by rule Bash(rm *)"


async def test_ask_pauses_the_session_until_allow_once_then_the_tool_runs(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="written")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        assert approval.tool_name == "mcp__file__write_file"
        assert approval.annotations.destructiveHint is True
        assert "ask" in approval.reason
        assert (await h.host.store.get_session(session.id)).status == "waiting_approval"
        assert not (h.workspace / "notes.txt").exists()
        await h.answer(approval, Decision(kind="allow_once"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed"
        assert (h.workspace / "notes.txt").read_text() == "hello\n"
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by) == ("allow", "user")
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "done" and record.decision == "allow_once (user)"


async def test_deny_with_a_message_reaches_the_model(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        await h.answer(await h.next_approval(), Decision(kind="deny", message="use staging"))
        await h.host.runner.wait(session.id, timeout=30)
        text = h.model.requests[-1].tool_results()[0].text
        assert "denied" in text and "use staging" in text
        assert not (h.workspace / "notes.txt").exists()


async def test_edited_arguments_run_instead_of_the_original(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        edited = {"path": "other.txt", "content": "edited\n"}
        await h.answer(await h.next_approval(), Decision(kind="allow_once", updated_arguments=edited))
        await h.host.runner.wait(session.id, timeout=30)
        assert not (h.workspace / "notes.txt").exists()
        assert (h.workspace / "other.txt").read_text() == "edited\n"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.arguments == edited


async def test_edited_arguments_that_hit_a_deny_rule_are_denied(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, permissions={"deny": ["Edit(secret.txt)"]}, pool=pool) as h:
        session = await h.start("write")
        edited = {"path": "secret.txt", "content": "x"}
        await h.answer(await h.next_approval(), Decision(kind="allow_once", updated_arguments=edited))
        await h.host.runner.wait(session.id, timeout=30)
        assert not (h.workspace / "secret.txt").exists()
        assert "Denied" in h.model.requests[-1].tool_results()[0].text


async def test_allow_for_session_stops_asking_for_that_call_in_that_session_only(tmp_path, pool):
    script = [
        Reply(tool_calls=[write("notes.txt", "1\n")]),
        Reply(tool_calls=[write("notes.txt", "2\n")]),
        Reply(text="done"),
        Reply(tool_calls=[write("notes.txt", "3\n")]),
        Reply(text="done again"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        first = await h.start("write twice")
        await h.answer(await h.next_approval(), Decision(kind="allow_session"))
        done = await h.host.runner.wait(first.id, timeout=30)
        assert done.status == "completed"
        assert done.session_rules == ["mcp__file__write_file(./notes.txt)"]
        assert (h.workspace / "notes.txt").read_text() == "2\n"
        second = await h.start("another session")
        approval = await h.next_approval()
        assert approval.session_id == second.id
        await h.answer(approval, Decision(kind="allow_once"))
        await h.host.runner.wait(second.id, timeout=30)


async def test_allow_for_session_also_answers_other_pending_approvals_it_covers(tmp_path, pool):
    script = [Reply(tool_calls=[write("a.txt", id="c1"), write("b.txt", id="c2")]), Reply(text="done")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write both")
        first, second = await h.next_approval(), await h.next_approval()
        # An admin may widen the rule past this call's path (a non-admin's stays narrow).
        await h.answer(first, Decision(kind="allow_session", rules=["Edit(*.txt)"]))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed"
        assert (h.workspace / "a.txt").exists() and (h.workspace / "b.txt").exists()
        assert (await h.host.store.get_approval(second.id)).decided_by == "rule"


async def test_always_allow_writes_the_rule_to_the_config_file_and_applies_it(tmp_path, pool):
    script = [
        Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "git status"})]),
        Reply(text="ok"),
        Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "git status --short"})]),
        Reply(text="ok again"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("status")
        approval = await h.next_approval()
        assert approval.suggested_rules == ["mcp__shell__exec(git status *)"]
        await h.answer(approval, Decision(kind="allow_always"))
        await h.host.runner.wait(session.id, timeout=30)
        written = yaml.safe_load(h.host.settings.writable_config_file.read_text())
        assert written["permissions"]["allow"] == ["mcp__shell__exec(git status *)"]
        again = await h.run("status again")
        assert again.status == "completed"
        assert len(await h.host.store.list_approvals()) == 1


async def test_an_unanswered_approval_times_out_to_deny(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, approval_timeout=0.2, pool=pool) as h:
        session = await h.run("write")
        assert session.status == "completed"
        assert "timed out" in h.model.requests[-1].tool_results()[0].text
        [approval] = await h.host.store.list_approvals()
        assert approval.status == "expired"
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by) == ("deny", "timeout")


async def test_stopping_while_waiting_leaves_no_half_recorded_call(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="never")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        stopped = await h.host.runner.stop(session.id)
        assert stopped.status == "stopped"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped" and record.finished_at is not None
        assert (await h.host.store.get_approval(approval.id)).status == "cancelled"
        tool_messages = [m for m in await h.host.store.list_messages(session.id) if m.role == "tool"]
        assert [m.tool_call_id for m in tool_messages] == [record.id]
        assert not (h.workspace / "notes.txt").exists()


async def test_stopping_a_running_tool_records_it_as_stopped(tmp_path, pool):
    script = [Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "sleep 20"})])]
    async with scripted_host(tmp_path, script, policies={"mcp__shell__exec": "always_allow"}, pool=pool) as h:
        session = await h.start("sleep")
        await h.next_event("tool.started")
        assert (await h.host.runner.stop(session.id)).status == "stopped"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped"


async def test_a_before_tool_hook_can_block_but_never_approve(tmp_path, pool):
    class NoNotes(ToolHooks):
        async def before_tool(self, *, session_id, call):
            return Block(message="notes are frozen") if call.arguments.get("path") == "notes.txt" else None

    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        h.host.gate.hooks = HookChain([NoNotes()])
        await h.run("write")
        assert "notes are frozen" in h.model.requests[-1].tool_results()[0].text
        [entry] = await h.host.store.list_audit()
        assert entry.decided_by == "hook"


async def test_every_tool_that_ran_has_an_allow_audit_row_written_before_it_started(tmp_path, pool):
    script = [
        Reply(tool_calls=[ScriptedToolCall(name="mcp__file__list_dir", arguments={"path": "."}, id=f"c{i}") for i in range(3)]),
        Reply(text="ok"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.run("list")
        records = await h.host.store.list_tool_calls(session.id)
        audit = {e.tool_call_id: e for e in await h.host.store.list_audit()}
        assert {r.id for r in records} == set(audit) == {"c0", "c1", "c2"}
        for record in records:
            assert audit[record.id].decision == "allow"
            assert audit[record.id].created_at <= record.started_at


async def test_concurrent_answers_to_one_approval_run_the_tool_once(tmp_path, pool):
    # The same answer sent four times at once (a retried POST) is one decision: each caller gets
    # the approval as decided; a different answer racing them is refused.
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval()
        results = await asyncio.gather(
            *(h.answer(approval, Decision(kind="allow_once")) for _ in range(4)),
            h.answer(approval, Decision(kind="deny", message="no")),
            return_exceptions=True,
        )
        allowed, denied = results[:4], results[4]
        if isinstance(denied, Exception):  # an allow came first: every allow is that one decision
            assert all(isinstance(r, Approval) and r.decision.kind == "allow_once" for r in allowed)
        else:  # the deny came first: every allow is refused
            assert all(isinstance(r, Exception) for r in allowed)
        await h.host.runner.wait(session.id, timeout=30)
        assert len(await h.host.store.list_audit()) == 1
        ran = [r for r in await h.host.store.list_tool_calls(session.id) if r.status == "done"]
        assert len(ran) == (0 if not isinstance(denied, Exception) else 1)


# decide and execute: the two halves the Claude Agent SDK engine calls separately


class RecordingTools:
    """A stand-in pool: one read-only tool and one write tool, and a list of what ran."""

    def __init__(self) -> None:
        from backend.domain.tools import ToolAnnotations, ToolInfo

        self.ran: list[tuple[str, dict]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        """What each call reports as its progress before it returns."""
        self._tools = {
            "mcp__file__read_file": ToolInfo(
                name="mcp__file__read_file", server="file", tool="read_file", annotations=ToolAnnotations(readOnlyHint=True)
            ),
            "mcp__file__write_file": ToolInfo(name="mcp__file__write_file", server="file", tool="write_file"),
        }

    def tool(self, name):
        return self._tools.get(name)

    def tools(self):
        return list(self._tools.values())

    async def call(
        self, name, arguments, *, workspace, session_id, timeout=None, call_id=None, redact=None, on_progress=None,
        on_task=None,
    ):
        from backend.domain.tools import ToolResult

        self.ran.append((name, arguments))
        for report in self.progress:
            await on_progress(*report)
        return ToolResult(text=f"ran {name}")


class QuietSessions:
    async def approval_waiting(self, session_id, delta):
        pass

    async def add_session_rules(self, session_id, rules):
        pass


@contextlib.asynccontextmanager
async def bare_gate(tmp_path, *, allow=(), timeout=600):
    """A gate over a real store, bus and broker, with a recording stand-in for the pool."""
    from backend.engine.events import EventBus
    from backend.approvals.broker import ApprovalBroker
    from backend.approvals.gate import ToolGate
    from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
    from backend.rules.grammar import RuleSet
    from backend.store.sqlite import SqliteStore

    store = SqliteStore(tmp_path / "gate.db")
    await store.open()
    bus = EventBus(store)
    tools = RecordingTools()
    gate = ToolGate(
        policy=PolicyEngine(RuleSet.from_config({"allow": list(allow)}, source="user"), DEFAULT_POLICIES),
        broker=ApprovalBroker(store, bus, timeout=timeout),
        store=store,
        bus=bus,
        tools=tools,
        sessions=QuietSessions(),
    )
    try:
        yield gate, tools
    finally:
        await store.close()


def gate_session(tmp_path):
    from backend.approvals.gate import GateSession

    return GateSession(session_id="s1", workspace=tmp_path)


READ_CALL = {"path": "a.txt"}


async def test_a_call_nobody_decided_on_is_refused_by_execute_and_never_runs(tmp_path):
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, allow=["mcp__file__read_file"]) as (gate, tools):
        result = await gate.execute(gate_session(tmp_path), GateCall(id="c1", name="mcp__file__read_file", arguments=READ_CALL))
        assert result.is_error and "No allow decision was recorded" in result.text
        assert tools.ran == []
        [entry] = await gate.store.list_audit()
        assert (entry.tool_call_id, entry.decision) == ("c1", "deny")
        [record] = await gate.store.list_tool_calls("s1")
        assert record.status == "denied"


async def test_execute_refuses_arguments_other_than_the_ones_that_were_allowed(tmp_path):
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, allow=["mcp__file__read_file"]) as (gate, tools):
        session = gate_session(tmp_path)
        decision = await gate.decide(session, GateCall(id="c1", name="mcp__file__read_file", arguments=READ_CALL))
        assert decision.allowed
        swapped = GateCall(id="c1", name="mcp__file__read_file", arguments={"path": "/etc/shadow"})
        result = await gate.execute(session, swapped)
        assert result.is_error and "differ from the ones that were allowed" in result.text
        assert tools.ran == []
        assert gate.pending_decisions("s1") == []
        [record] = await gate.store.list_tool_calls("s1")
        assert record.status == "denied" and record.arguments == READ_CALL


async def test_decide_then_execute_runs_the_call_once_with_its_allow_written_before_it_started(tmp_path):
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, allow=["mcp__file__read_file"]) as (gate, tools):
        session = gate_session(tmp_path)
        call = GateCall(id="c1", name="mcp__file__read_file", arguments=READ_CALL)
        decision = await gate.decide(session, call)
        assert decision.allowed and decision.result is None
        assert tools.ran == [] and await gate.store.list_audit() == []  # deciding runs nothing
        result = await gate.execute(session, call)
        assert result.text == "ran mcp__file__read_file" and not result.is_error
        again = await gate.execute(session, call)  # an allow is spent by the call it allowed
        assert again.is_error
        assert tools.ran == [("mcp__file__read_file", READ_CALL)]
        allows = [e for e in await gate.store.list_audit() if e.decision == "allow"]
        [record] = [r for r in await gate.store.list_tool_calls("s1") if r.status == "done"]
        assert len(allows) == 1 and allows[0].created_at <= record.started_at


async def test_a_refusal_from_decide_is_recorded_at_once_and_leaves_nothing_to_execute(tmp_path):
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, timeout=0.05) as (gate, tools):
        session = gate_session(tmp_path)
        call = GateCall(id="c1", name="mcp__file__write_file", arguments={"path": "a.txt", "content": "x"})
        decision = await gate.decide(session, call)  # asks; nobody answers; the timeout denies
        assert not decision.allowed and decision.result is not None and "timed out" in decision.result.text
        [record] = await gate.store.list_tool_calls("s1")
        assert record.status == "denied" and record.finished_at is not None
        assert gate.pending_decisions("s1") == []
        assert tools.ran == []


async def test_settle_unrun_ends_an_allowed_call_the_engine_never_started(tmp_path):
    from backend.domain.tools import ToolResult
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, allow=["mcp__file__read_file"]) as (gate, tools):
        session = gate_session(tmp_path)
        call = GateCall(id="c1", name="mcp__file__read_file", arguments=READ_CALL)
        await gate.decide(session, call)
        await gate.settle_unrun(session, call, ToolResult.error("cut short"))
        assert gate.pending_decisions("s1") == []
        [record] = await gate.store.list_tool_calls("s1")
        assert record.status == "error" and "cut short" in (record.result or "")
        assert (await gate.execute(session, call)).is_error
        assert tools.ran == []


async def test_a_running_tools_progress_is_an_ephemeral_event_naming_the_call(tmp_path):
    from backend.approvals.gate import GateCall

    async with bare_gate(tmp_path, allow=["mcp__file__read_file"]) as (gate, tools):
        tools.progress = [(1, 2, "half"), (2, 2, None)]
        feed = gate.bus.subscribe("s1")
        result = await gate.run(gate_session(tmp_path), GateCall(id="c1", name="mcp__file__read_file", arguments=READ_CALL))
        assert not result.is_error
        progress = [event for event in feed.drain() if event.type == "tool.progress"]
        assert [event.data for event in progress] == [
            {"id": "c1", "progress": 1, "total": 2, "message": "half"},
            {"id": "c1", "progress": 2, "total": 2, "message": None},
        ]
        assert all(event.ephemeral for event in progress)
        assert all(event.type != "tool.progress" for event in await gate.store.list_events("s1"))
