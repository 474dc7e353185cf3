"""Modes in a running session: which tools the model is offered (checked at the model request
itself), the mode's policies, a mode's default folder, and the plan → agent switch gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Approval, Decision
from backend.mcp.pool import McpPool
from backend.engine.events import EventBus
from backend.approvals.broker import ApprovalBroker
from backend.store.sqlite import SqliteStore
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host

WRITE = "mcp__file__write_file"
READ = "mcp__file__read_file"
EXEC = "mcp__shell__exec"


pytestmark = pytest.mark.asyncio(loop_scope="module")


def write_call(path: str = "notes.txt", content: str = "hi") -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=WRITE, arguments={"path": path, "content": content})])


async def test_ask_mode_offers_the_model_only_read_only_tools(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text="answered")], pool=pool) as h:
        await h.run("what is here?", SessionOptions(mode="ask"))
        offered = set(h.model.requests[0].tool_names)
        assert READ in offered and "mcp__file__list_dir" in offered
        assert not offered & {WRITE, "mcp__file__edit_file", EXEC}


async def test_agent_mode_offers_every_tool(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text="done")], pool=pool) as h:
        await h.run("go", SessionOptions(mode="agent"))
        assert {READ, WRITE, "mcp__file__edit_file", EXEC} <= set(h.model.requests[0].tool_names)


async def test_a_call_to_a_tool_the_mode_does_not_offer_is_refused_and_never_runs(tmp_path: Path, pool: McpPool) -> None:
    script = [write_call(), Reply(text="could not write")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.run("write anyway", SessionOptions(mode="ask"))
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "error" and record.is_error
        assert "The ask mode does not offer the tool 'mcp__file__write_file'" in (record.result or "")
        assert not (h.workspace / "notes.txt").exists()
        assert await h.host.broker.pending() == []


async def test_a_person_s_mode_policy_denies_a_tool_it_still_offers(tmp_path: Path, pool: McpPool) -> None:
    script = [write_call(), Reply(text="denied, fine")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        h.host.modes.save("careful", _mode_write(policies={WRITE: "deny"}))
        session = await h.run("write", SessionOptions(mode="careful"))
        assert WRITE in h.model.requests[0].tool_names
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "denied"
        assert "mode:careful" in (record.result or "")
        assert not (h.workspace / "notes.txt").exists()


async def test_a_mode_s_default_folder_becomes_the_workspace_and_is_created(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text="ok")], pool=pool) as h:
        h.host.modes.save("notes", _mode_write(default_folder="notes/inbox"))
        session = await h.run("jot", SessionOptions(mode="notes"))
        assert Path(session.workspace) == (h.workspace / "notes" / "inbox").resolve()
        assert Path(session.workspace).is_dir()
        assert f"Workspace: {session.workspace}" in (h.model.requests[0].system or "")


async def test_an_unknown_mode_is_refused_when_the_session_is_created(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [], pool=pool) as h:
        with pytest.raises(ValueError, match="unknown mode 'nope'"):
            await h.host.runner.create(prompt="hi", options=SessionOptions(mode="nope"))
        assert await h.host.store.list_sessions() == []


def _mode_write(**fields: object):  # noqa: ANN202
    from backend.modes.model import ModeWrite

    return ModeWrite.model_validate({"description": "test mode", "prompt": "Test mode.", **fields})


# the plan → agent gate


PLAN = "## Plan\n1. Write notes.txt"


async def plan_and_wait_for_gate(h: Harness) -> tuple[str, Approval]:
    session = await h.start("plan the notes", SessionOptions(mode="plan"))
    gate = await h.next_approval()
    return session.id, gate


async def test_a_finished_plan_asks_to_switch_to_agent_mode_with_the_plan(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text=PLAN)], pool=pool) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
        assert gate.kind == "mode_switch"
        assert gate.arguments == {"mode": "agent", "plan": PLAN}
        assert (await h.host.store.get_session(session_id)).status == "waiting_approval"
        assert WRITE not in h.model.requests[0].tool_names


async def test_allowing_the_switch_with_an_edited_plan_carries_it_out_in_agent_mode(tmp_path: Path, pool: McpPool) -> None:
    edited = "## Plan\n1. Write notes.txt saying 'edited'"
    script = [Reply(text=PLAN), write_call(content="edited"), Reply(text="wrote it")]
    async with scripted_host(tmp_path, script, pool=pool, policies={WRITE: "always_allow"}) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
        await h.answer(gate, Decision(kind="allow_once", updated_arguments={"mode": "agent", "plan": edited}))
        session = await h.host.runner.wait(session_id, timeout=30)
        assert (session.status, session.mode) == ("completed", "agent")
        carry_out = h.model.requests[1]
        assert edited in carry_out.last_prompt() and "with their edits" in carry_out.last_prompt()
        assert WRITE in carry_out.tool_names and "Mode: agent" in (carry_out.system or "")
        assert (h.workspace / "notes.txt").read_text() == "edited"


async def test_denying_the_switch_with_feedback_revises_the_plan_in_plan_mode(tmp_path: Path, pool: McpPool) -> None:
    script = [Reply(text=PLAN), Reply(text="## Plan\n1. Write notes.md instead")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
        await h.answer(gate, Decision(kind="deny", message="use Markdown"))
        second = await h.next_approval()
        assert second.kind == "mode_switch" and "notes.md" in second.arguments["plan"]
        revise = h.model.requests[1]
        assert "They said: use Markdown" in revise.last_prompt() and "Mode: plan" in (revise.system or "")
        await h.answer(second, Decision(kind="deny"))
        session = await h.host.runner.wait(session_id, timeout=30)
        assert (session.status, session.mode) == ("completed", "plan")
        assert len(h.model.requests) == 2


async def test_stopping_a_session_at_the_switch_gate_withdraws_the_question(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text=PLAN)], pool=pool) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
        await h.host.runner.stop(session_id)
        closed = await h.host.store.get_approval(gate.id)
        assert closed.status == "cancelled"
        assert (await h.host.store.get_session(session_id)).status == "stopped"


async def test_a_plan_from_a_workflow_or_a_program_asks_nobody(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text=PLAN)], pool=pool) as h:
        session = await h.run("plan", SessionOptions(mode="plan", origin="api"))
        assert session.status == "completed"
        assert await h.host.broker.pending() == []


async def test_the_switch_gate_survives_a_restart_and_can_still_be_answered(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text=PLAN)], pool=pool) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
    script = [Reply(text="carried out")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        [pending] = await h.host.broker.pending()
        assert pending.id == gate.id
        await h.answer(pending, Decision(kind="allow_once"))
        session = await h.host.runner.wait(session_id, timeout=30)
        assert (session.status, session.mode) == ("completed", "agent")
        assert PLAN in h.model.requests[0].last_prompt()


async def test_a_switch_gate_answered_while_no_run_looked_is_carried_out_at_the_next_start(
    tmp_path: Path, pool: McpPool
) -> None:
    async with scripted_host(tmp_path, [Reply(text=PLAN)], pool=pool) as h:
        session_id, gate = await plan_and_wait_for_gate(h)
        db_path = h.host.settings.db_path
    # The answer lands while no run is there to hear it (a person quicker than recovery, or
    # another process): the next start must carry it out, not plan again.
    async with SqliteStore(db_path) as store:
        broker = ApprovalBroker(store, EventBus(store))
        await broker.answer(gate.id, Decision(kind="allow_once"))
    async with scripted_host(tmp_path, [Reply(text="carried out")], pool=pool) as h:
        session = await h.host.runner.wait(session_id, timeout=30)
        [request] = h.model.requests
    assert (session.status, session.mode) == ("completed", "agent")
    assert "Mode: agent" in (request.system or "") and PLAN in request.last_prompt()
