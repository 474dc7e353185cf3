"""WorkflowRunner end to end with the scripted model: steps, gates, edits, denials, failures, restarts."""

from __future__ import annotations

import threading

import pytest

from backend.domain.models import Decision
from backend.app.host import Host
from backend.testing import ModelRequest, Reply, ScriptedModelServer
from backend.testing.harness import scripted_host, scripted_settings
from backend.workflows.files import WorkflowError

NO_SERVERS = {"builtin_servers": False}
PLAN = "## Plan\n1. Add a greet() function to hello.py\n2. Run the tests"


async def sessions_of(host: Host, run_id: str) -> list:
    return [s for s in await host.store.list_sessions(limit=1000) if s.workflow_run_id == run_id]


async def event_types(host: Host, session_id: str) -> list[tuple[str, object]]:
    return [
        (e.type, e.data.get("status"))
        for e in await host.store.list_events(session_id)
        if e.type.startswith("workflow.")
    ]


async def test_plan_then_build_carries_the_plan_through_an_edited_gate_into_agent_mode(tmp_path):
    async with scripted_host(tmp_path, [Reply(text=PLAN), Reply(text="Built it.")], **NO_SERVERS) as h:
        run = await h.host.workflows.start("plan-then-build", "Add a greeting")
        assert (run.status, run.steps[0].status) == ("running", "running")
        assert run.steps[0].session_id is not None

        gate = await h.next_approval()
        assert (gate.kind, gate.tool_name, gate.session_id) == ("workflow_step", "workflow_step", run.steps[0].session_id)
        assert gate.tool_call_id == f"workflow:{run.id}:1"
        assert (gate.arguments["step"], gate.arguments["of"], gate.arguments["mode"]) == (2, 2, "agent")
        assert PLAN in gate.arguments["prompt"] and "Add a greeting" in gate.arguments["prompt"]
        assert "Step 1 of 2 (plan) is done" in gate.reason
        assert (await h.host.store.get_workflow_run(run.id)).status == "waiting_approval"

        edited = {**gate.arguments, "prompt": "Only add greet(); skip the tests."}
        await h.answer(gate, Decision(kind="allow_once", updated_arguments=edited))
        done = await h.host.workflows.wait(run.id, timeout=30)

        assert done.status == "completed" and done.finished_at is not None
        assert h.model.requests[0].last_prompt() == "Add a greeting"
        assert h.model.requests[1].last_prompt() == "Only add greet(); skip the tests."
        assert [(s.status, s.output) for s in done.steps] == [("completed", PLAN), ("completed", "Built it.")]
        assert (done.steps[1].prompt, done.steps[1].prompt_edited) == ("Only add greet(); skip the tests.", True)
        assert done.steps[1].approval_id == gate.id
        sessions = {s.id: s for s in await sessions_of(h.host, run.id)}
        assert [(sessions[s.session_id].mode, sessions[s.session_id].origin) for s in done.steps] == [
            ("plan", "workflow"),
            ("agent", "workflow"),
        ]
        assert len(sessions) == 2
        assert await event_types(h.host, done.steps[0].session_id) == [
            ("workflow.step", "running"),
            ("workflow.step", "completed"),
            ("workflow.gate", "pending"),
            ("workflow.gate", "allowed"),
        ]
        assert await event_types(h.host, done.steps[1].session_id) == [
            ("workflow.step", "running"),
            ("workflow.step", "completed"),
            ("workflow.finished", "completed"),
        ]
        h.model.assert_all_used()


async def test_allowing_a_gate_unedited_gives_the_next_step_the_rendered_prompt(tmp_path):
    async with scripted_host(tmp_path, [Reply(text=PLAN), Reply(text="ok")], **NO_SERVERS) as h:
        run = await h.host.workflows.start("plan-then-build", "Add a greeting")
        gate = await h.next_approval()
        await h.answer(gate, Decision(kind="allow_once"))
        done = await h.host.workflows.wait(run.id, timeout=30)
        assert done.status == "completed" and done.steps[1].prompt_edited is False
        assert h.model.requests[1].last_prompt() == gate.arguments["prompt"]
        assert PLAN in h.model.requests[1].last_prompt()


async def test_a_denied_gate_ends_the_run_denied_with_the_reason_and_starts_no_next_step(tmp_path):
    async with scripted_host(tmp_path, [Reply(text=PLAN)], **NO_SERVERS) as h:
        run = await h.host.workflows.start("plan-then-build", "Add a greeting")
        gate = await h.next_approval()
        await h.answer(gate, Decision(kind="deny", message="The plan touches the wrong file."))
        done = await h.host.workflows.wait(run.id, timeout=30)
        assert (done.status, done.detail) == ("denied", "The plan touches the wrong file.")
        assert (done.steps[1].status, done.steps[1].session_id) == ("denied", None)
        assert [s.id for s in await sessions_of(h.host, run.id)] == [run.steps[0].session_id]
        assert len(h.model.requests) == 1
        assert ("workflow.finished", "denied") in await event_types(h.host, run.steps[0].session_id)


async def test_a_step_session_that_ends_in_error_fails_the_run(tmp_path):
    def refuse(_: ModelRequest) -> Reply:
        return Reply(status=400, text="the model refused")

    async with scripted_host(tmp_path, refuse, **NO_SERVERS) as h:
        run = await h.host.workflows.start("plan-then-build", "Add a greeting")
        done = await h.host.workflows.wait(run.id, timeout=30)
        assert done.status == "failed"
        assert done.detail is not None and done.detail.startswith("Step 1 (plan) failed")
        assert done.steps[0].status == "error" and done.steps[0].error
        assert done.steps[1].session_id is None
        assert await h.host.broker.pending() == []


async def test_stopping_a_run_at_its_gate_withdraws_the_gate(tmp_path):
    async with scripted_host(tmp_path, [Reply(text=PLAN)], **NO_SERVERS) as h:
        run = await h.host.workflows.start("plan-then-build", "Add a greeting")
        gate = await h.next_approval()
        stopped = await h.host.workflows.stop(run.id)
        assert (stopped.status, stopped.steps[1].status) == ("stopped", "stopped")
        assert (await h.host.store.get_approval(gate.id)).status == "cancelled"
        assert len(await sessions_of(h.host, run.id)) == 1


async def test_a_step_naming_an_unknown_mode_is_refused_before_anything_runs(tmp_path):
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        folder = h.host.data_dir / "workflows"
        folder.mkdir()
        (folder / "odd.yaml").write_text("name: odd\nsteps:\n  - mode: juggle\n    prompt: '{{input}}'\n")
        with pytest.raises(WorkflowError, match="juggle"):
            await h.host.workflows.start("odd", "x")
        assert await h.host.store.list_workflow_runs() == []


async def test_a_run_waiting_at_a_gate_continues_after_a_restart_when_the_pending_approval_is_answered(tmp_path):
    with ScriptedModelServer([Reply(text=PLAN)]) as model:
        settings = scripted_settings(tmp_path, model, **NO_SERVERS)
        first = Host(settings)
        await first.start()
        events = first.bus.subscribe(None)
        try:
            run = await first.workflows.start("plan-then-build", "Add a greeting")
            while (event := await events.get(timeout=15)).type != "approval.requested":
                pass
        finally:
            first.bus.unsubscribe(events)
            await first.aclose()

        model.push(Reply(text="Built after the restart."))
        second = Host(settings)
        await second.start(recover=True)
        try:
            assert (await second.store.get_workflow_run(run.id)).status == "waiting_approval"
            [pending] = await second.broker.pending()
            assert pending.id == event.data["id"]
            await second.broker.answer(pending.id, Decision(kind="allow_once"))
            done = await second.workflows.wait(run.id, timeout=30)
            assert done.status == "completed"
            assert done.steps[1].output == "Built after the restart."
            assert PLAN in model.requests[-1].last_prompt()
        finally:
            await second.aclose()


async def test_a_step_session_still_running_at_a_restart_is_waited_for_after_recovery(tmp_path):
    release = threading.Event()

    def slow(_: ModelRequest) -> Reply:
        release.wait(15)
        return Reply(text="too late")

    with ScriptedModelServer([slow, Reply(text=PLAN)]) as model:
        settings = scripted_settings(tmp_path, model, **NO_SERVERS)
        first = Host(settings)
        await first.start()
        try:
            run = await first.workflows.start("plan-then-build", "Add a greeting")
            await model.await_requests(1)
        finally:
            await first.aclose()
            release.set()

        second = Host(settings)
        await second.start(recover=True)
        events = second.bus.subscribe(None)
        try:
            while (event := await events.get(timeout=15)).type != "approval.requested":
                pass
            assert event.data["session_id"] == run.steps[0].session_id
            assert PLAN in event.data["arguments"]["prompt"]
            stored = await second.store.get_workflow_run(run.id)
            assert (stored.status, stored.steps[0].output) == ("waiting_approval", PLAN)
        finally:
            second.bus.unsubscribe(events)
            await second.aclose()
