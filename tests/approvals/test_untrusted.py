"""Untrusted content (issue 34, item 5): a result from outside is tagged in the transcript and
marked as data for the model; with `permissions.after_untrusted: ask`, a later call that could
send data out asks, naming the result that came before, across a restart of the host too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from backend.approvals.untrusted import MARKER, AfterUntrusted, UntrustedContent, sends_out
from backend.domain.models import Decision, ToolCallRecord
from backend.domain.tools import ToolAnnotations
from backend.mcp.config import McpServerConfig, brings_outside_text
from backend.rules.policy_engine import Evaluation, ToolCallView
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import only_servers, scripted_host
from tests.approvals.fixtures.hostile_server import INJECTION

HOSTILE_SERVER = Path(__file__).with_name("fixtures") / "hostile_server.py"
INTEL = McpServerConfig(command=sys.executable, args=[str(HOSTILE_SERVER)], trust="untrusted")
SERVERS = {**only_servers(), "intel": INTEL}
TRUSTED = {"mcp__intel": "always_allow"}  # the README's way of trusting a server: nothing asks


def lookup(id: str = "l1") -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__intel__lookup", arguments={"record": 7}, id=id)


def send(id: str = "s1") -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__intel__send", arguments={"to": "ops@example.com", "body": "hi"}, id=id)


@pytest.mark.parametrize("engine", ["litellm", "claude-sdk"])
async def test_an_untrusted_result_is_tagged_in_the_transcript_and_marked_for_the_model(tmp_path, engine):
    script = [Reply(tool_calls=[lookup()]), Reply(text="read it")]
    settings = {"default_engine": engine} if engine == "claude-sdk" else {}
    async with scripted_host(
        tmp_path, script, in_process=False, mcp_servers=SERVERS, policies=TRUSTED, **settings
    ) as h:
        session = await h.run("look up record 7", timeout=90)
        [record] = await h.host.store.list_tool_calls(session.id)
        [result] = [e.data for e in await h.host.store.list_events(session.id) if e.type == "tool.result"]
        [seen] = h.model.requests[-1].tool_results()
    assert session.status == "completed"
    assert record.untrusted == "mcp__intel__lookup"
    assert (result["untrusted"], result["source"]) == (True, "mcp__intel__lookup")
    marker = MARKER.format(source="mcp__intel__lookup")
    assert seen.text == marker + INJECTION  # the model reads it as data, behind the marker line
    assert result["text"] == marker + INJECTION


async def test_with_after_untrusted_ask_a_later_third_party_write_asks_naming_the_untrusted_result(tmp_path):
    script = [Reply(tool_calls=[lookup()]), Reply(tool_calls=[send()]), Reply(text="stopped")]
    permissions = {"after_untrusted": "ask"}
    async with scripted_host(
        tmp_path, script, in_process=False, mcp_servers=SERVERS, policies=TRUSTED, permissions=permissions
    ) as h:
        session = await h.start("look up record 7, then tell ops")
        approval = await h.next_approval()
        assert (approval.tool_name, approval.session_id) == ("mcp__intel__send", session.id)
        assert "after the result of mcp__intel__lookup at step 1" in approval.reason
        await h.answer(approval, Decision(kind="deny"))
        done = await h.host.runner.wait(session.id, timeout=30)
        calls = {c.name: c.status for c in await h.host.store.list_tool_calls(session.id)}
    assert done.status == "completed"
    assert calls == {"mcp__intel__lookup": "done", "mcp__intel__send": "denied"}


async def test_without_after_untrusted_the_trusted_write_runs_without_asking(tmp_path):
    script = [Reply(tool_calls=[lookup()]), Reply(tool_calls=[send()]), Reply(text="sent")]
    async with scripted_host(tmp_path, script, in_process=False, mcp_servers=SERVERS, policies=TRUSTED) as h:
        session = await h.run("look up record 7, then tell ops")
        approvals = await h.host.store.list_approvals()
        calls = {c.name: c.status for c in await h.host.store.list_tool_calls(session.id)}
    assert session.status == "completed" and approvals == []
    assert calls == {"mcp__intel__lookup": "done", "mcp__intel__send": "done"}


async def test_a_session_that_took_in_outside_text_still_asks_after_a_restart_of_the_host(tmp_path):
    permissions = {"after_untrusted": "ask"}
    settings = {"mcp_servers": SERVERS, "policies": TRUSTED, "permissions": permissions, "in_process": False}
    async with scripted_host(tmp_path, [Reply(tool_calls=[lookup()]), Reply(text="read")], **settings) as h:
        session = await h.run("look up record 7")
    async with scripted_host(tmp_path, [Reply(tool_calls=[send()]), Reply(text="ok")], **settings) as h:
        await h.host.runner.send(session.id, "now tell ops")
        approval = await h.next_approval()
        assert "after the result of mcp__intel__lookup at step 1" in approval.reason
        await h.answer(approval, Decision(kind="deny"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        reread = UntrustedContent(h.host.store, setting=lambda: "ask")
        first = await reread.load(session.id)
    assert first is not None and (first.tool, first.step, first.source) == ("mcp__intel__lookup", 1, "mcp__intel__lookup")


def test_which_servers_bring_outside_text() -> None:
    builtin = McpServerConfig(command="python", managed=True)
    third = McpServerConfig(command="node")
    assert brings_outside_text("browser", builtin, "snapshot")
    assert not brings_outside_text("file", builtin, "read_file")
    assert brings_outside_text("web", third, "fetch")  # a fetch tool on any server
    assert not brings_outside_text("notes", third, "list_notes")
    assert brings_outside_text("notes", third.model_copy(update={"trust": "untrusted"}), "list_notes")
    assert not brings_outside_text("web", third.model_copy(update={"trust": "trusted"}), "fetch")


def test_which_calls_could_send_data_out(tmp_path) -> None:
    def view(name: str, read_only: bool | None = None, **arguments: object) -> ToolCallView:
        hints = ToolAnnotations(readOnlyHint=read_only)
        return ToolCallView(name=name, arguments=dict(arguments), workspace=tmp_path, annotations=hints)

    assert sends_out(view("mcp__intel__send", read_only=False))
    assert sends_out(view("mcp__intel__send"))  # no annotation: it may write
    assert not sends_out(view("mcp__intel__lookup", read_only=True))
    assert sends_out(view("mcp__browser__navigate", read_only=False, url="https://x.example/?q=secret"))
    assert not sends_out(view("mcp__browser__snapshot", read_only=True))
    assert sends_out(view("mcp__file__write_file", read_only=False, path="/tmp/elsewhere/out.txt"))
    assert sends_out(view("mcp__file__write_file", read_only=False, path="../out.txt"))
    assert not sends_out(view("mcp__file__write_file", read_only=False, path="notes/out.txt"))
    assert not sends_out(view("mcp__shell__exec", read_only=False, command="ls"))  # its network asks at the proxy


async def test_after_untrusted_turns_an_allow_into_an_ask_keeps_a_deny_and_adds_to_an_ask(tmp_path) -> None:
    class Rows:
        async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
            return [ToolCallRecord(id="c1", session_id=session_id, name="mcp__browser__snapshot", untrusted="page")]

    setting: list[AfterUntrusted] = ["ask"]
    content = UntrustedContent(Rows(), setting=lambda: setting[0])  # type: ignore[arg-type]
    await content.load("s")
    out = ToolCallView(name="mcp__intel__send", arguments={}, workspace=tmp_path, annotations=ToolAnnotations())
    allowed = Evaluation(verdict="allow", reason="rule", rule="mcp__intel")
    asked = content.review("s", out, allowed)
    assert (asked.verdict, asked.source) == ("ask", "after_untrusted")
    assert "after the result of mcp__browser__snapshot at step 1 (from page)" in asked.reason
    denied = Evaluation(verdict="deny", reason="deny rule")
    assert content.review("s", out, denied) is denied
    already = content.review("s", out, Evaluation(verdict="ask", reason="Ask rule"))
    assert already.verdict == "ask" and already.reason.startswith("Ask rule; outside text came in after the result")
    reading = ToolCallView(name="mcp__intel__lookup", arguments={}, workspace=tmp_path, annotations=ToolAnnotations(readOnlyHint=True))
    assert content.review("s", reading, allowed) is allowed
    setting[0] = "off"
    assert content.review("s", out, allowed) is allowed
