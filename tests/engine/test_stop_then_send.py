"""A stop racing a new message (issue 31, item 11): the stopped call stays stopped, and the next
turn tells the model what was stopped, before the new message, on both wire formats."""

from __future__ import annotations

import asyncio

import pytest

from backend.approvals.gate import STOPPED
from backend.domain.models import Decider
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANN = Decider(name="ann", kind="user", role="approver", via="rest")
WIRES = {
    "openai": lambda server: {},
    "anthropic": lambda server: {"model": "anthropic/scripted", "api_base": server.anthropic_base},
}


def write(path: str) -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "hello\n"})


def told_in_order(request) -> None:
    """The stopped call's result, then the new message, as each API wants them."""
    assert [r.text.split("\n")[0] for r in request.tool_results(since_prompt=False)] == ["Stopped by ann before it ran."]
    last = request.messages[-1]
    if request.api == "openai":
        assert request.messages[-2]["role"] == "tool" and last["role"] == "user"
        assert last["content"] == "never mind, read it instead"
    else:  # one user turn: the tool_result block first, then the person's words
        assert last["role"] == "user" and request.messages[-2]["role"] == "assistant"
        assert [block["type"] for block in last["content"]] == ["tool_result", "text"]
        assert last["content"][1]["text"] == "never mind, read it instead"


@pytest.mark.parametrize("wire", list(WIRES))
async def test_a_message_sent_while_a_stop_is_under_way_runs_after_the_stopped_call_is_told(tmp_path, pool, wire):
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="fine")]
    async with scripted_host(tmp_path, script, pool=pool, for_model=WIRES[wire]) as h:
        session = await h.start("write notes")
        approval = await h.next_approval()
        stopping = asyncio.create_task(h.host.runner.stop(session.id, by=ANN))
        await asyncio.sleep(0)  # the stop has begun; the message comes right behind it
        await h.host.runner.send(session.id, "never mind, read it instead")
        await stopping
        done = await h.host.runner.wait(session.id, timeout=20)

        assert done.status == "completed"
        assert [a.status for a in await h.host.store.list_approvals()] == ["cancelled"]  # never asked again
        closed = await h.host.store.get_approval(approval.id)
        assert closed.decider is not None and closed.decider.name == "ann"
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped" and record.result.startswith("Stopped by ann before it ran.")
        assert not (h.workspace / "notes.txt").exists()
        roles = [m.role for m in await h.host.store.list_messages(session.id)]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]
        told_in_order(h.model.requests[-1])


async def test_a_call_whose_approval_a_stop_withdrew_is_not_asked_again_when_its_run_ended_without_saying_so(
    tmp_path, pool
):
    # The run that waited ended before it could record the stop (its host shut down, or it ran on
    # another host): the approval is closed as stopped, the call still open in the transcript.
    script = [Reply(tool_calls=[write("notes.txt")]), Reply(text="fine")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write notes")
        approval = await h.next_approval()
        h.host.gate.shutting_down = True  # leave the call as stored, as a host that goes away does
        task = h.host.runner.run_here(session.id)
        task.cancel()
        await asyncio.wait({task}, timeout=10)
        h.host.gate.shutting_down = False
        await h.host.gate.broker.cancel(approval.id, STOPPED, decider=ANN)

        await h.host.runner.send(session.id, "never mind, read it instead")
        done = await h.host.runner.wait(session.id, timeout=20)

        assert done.status == "completed"
        assert [a.status for a in await h.host.store.list_approvals()] == ["cancelled"]
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "stopped"
        told_in_order(h.model.requests[-1])
