"""Shell commands in a running host (issue 29): every `exec` runs in its session's sandbox, an
instruction change the text misses fails in the kernel with a note for the model, one a person
allowed goes through, and `sandbox.auto_allow` runs confined commands without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.app.approvals import DecisionInvalid, PersonRequired
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import TEST_PERSON, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXEC = "mcp__shell__exec"


def run(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": command})])


def workspace_with_instructions(tmp_path: Path) -> Path:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("be careful\n")
    return workspace


async def test_a_script_that_changes_an_instruction_file_fails_in_the_kernel_without_a_question(
    tmp_path: Path, pool: McpPool
) -> None:
    workspace = workspace_with_instructions(tmp_path)
    script = [run("printf 'echo PWNED >> A''GENTS.md' > x.sh && sh x.sh"), Reply(text="done")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, policies={EXEC: "always_allow"}) as h:
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert await h.host.broker.pending() == []
    assert record.is_error
    assert "Read-only file system" in (record.result or "") and "write_file" in (record.result or "")
    assert (workspace / "AGENTS.md").read_text() == "be careful\n"


async def test_an_instruction_change_a_person_allowed_runs_with_that_file_writable(
    tmp_path: Path, pool: McpPool
) -> None:
    workspace = workspace_with_instructions(tmp_path)
    script = [run("echo 'be kind' >> AGENTS.md"), Reply(text="done")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, policies={EXEC: "always_allow"}) as h:
        session = await h.start("go")
        opened = await h.next_event("approval.requested", timeout=30)
        assert "change its own instructions" in opened.data["reason"]
        await h.host.approvals.answer(opened.data["id"], Decision(kind="allow_once"), by=TEST_PERSON, via="rest")
        done = await h.host.runner.wait(session.id, timeout=60)
        [record] = await h.host.store.list_tool_calls(done.id)
    assert not record.is_error, record.result
    assert (workspace / "AGENTS.md").read_text() == "be careful\nbe kind\n"


async def test_auto_allow_runs_a_confined_command_without_asking_but_an_ask_rule_still_asks(
    tmp_path: Path, pool: McpPool
) -> None:
    workspace = workspace_with_instructions(tmp_path)
    script = [run("ls -a > listing.txt && cat /etc/hostname >/dev/null"), run("git status"), Reply(text="done")]
    settings = {"sandbox": {"auto_allow": True}, "permissions": {"ask": ["Bash(git *)"]}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        session = await h.start("go")
        opened = await h.next_event("approval.requested", timeout=30)
        assert opened.data["arguments"] == {"command": "git status"}
        await h.host.approvals.answer(opened.data["id"], Decision(kind="deny"), by=TEST_PERSON, via="rest")
        done = await h.host.runner.wait(session.id, timeout=60)
        first, second = await h.host.store.list_tool_calls(done.id)
    assert first.status == "done" and "sandbox.auto_allow" in (first.decision or "")
    assert (workspace / "listing.txt").exists()
    assert second.status == "denied"


async def test_the_host_reports_what_confines_commands(tmp_path: Path, pool: McpPool) -> None:
    async with scripted_host(tmp_path, [Reply(text="hi")], pool=pool) as h:
        health = h.host.sandbox.status.health()
    assert health == {
        "backend": "bwrap",
        "confined": True,
        "detail": health["detail"],
        "warning": None,
    }


async def test_with_sandbox_off_commands_run_unconfined_and_the_host_says_so(tmp_path: Path, pool: McpPool) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("reachable")
    workspace = workspace_with_instructions(tmp_path)
    script = [run(f"cat {outside}"), Reply(text="done")]
    settings = {"sandbox": "off", "policies": {EXEC: "always_allow"}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        health = h.host.sandbox.status.health()
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
    assert health["confined"] is False and str(health["warning"]).startswith("commands run unconfined")
    assert "reachable" in (record.result or "")


async def test_without_a_working_sandbox_the_shell_server_is_not_started(tmp_path: Path, monkeypatch) -> None:
    from backend.app import server_configs as servers_module
    from backend.config import Settings
    from backend.sandbox.launcher import SandboxStatus

    settings = Settings(data_dir=tmp_path / "data", workspace=tmp_path)
    assert "shell" in servers_module.server_configs(settings)
    monkeypatch.setattr(servers_module, "detect", lambda setting: SandboxStatus(backend="none", detail="no namespaces"))
    assert "shell" not in servers_module.server_configs(settings)
    assert "file" in servers_module.server_configs(settings)
    off = Settings(data_dir=tmp_path / "data", workspace=tmp_path, sandbox="off")
    assert "shell" in servers_module.server_configs(off)


def outside(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": command, "outside_sandbox": True})])


async def test_a_command_outside_the_sandbox_is_its_own_question_allowed_once_at_a_time(
    tmp_path: Path, pool: McpPool
) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("outside the workspace")
    workspace = workspace_with_instructions(tmp_path)
    script = [outside(f"cat {elsewhere}"), outside(f"cat {elsewhere}"), Reply(text="done")]
    # Even a tool-wide allow and auto_allow leave it to a person.
    settings = {"policies": {EXEC: "always_allow"}, "sandbox": {"auto_allow": True}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        session = await h.start("go")
        first = await h.next_event("approval.requested", timeout=30)
        assert first.data["kind"] == "unconfined" and "OUTSIDE the sandbox" in first.data["reason"]
        with pytest.raises(DecisionInvalid):
            await h.host.approvals.answer(first.data["id"], Decision(kind="allow_session"), by=TEST_PERSON, via="rest")
        with pytest.raises(PersonRequired):
            await h.host.approvals.answer(first.data["id"], Decision(kind="allow_once"), by=TEST_PERSON, via="auto")
        await h.host.approvals.answer(first.data["id"], Decision(kind="allow_once"), by=TEST_PERSON, via="rest")
        second = await h.next_event("approval.requested", timeout=30)  # asked again: once means once
        assert second.data["kind"] == "unconfined"
        await h.host.approvals.answer(second.data["id"], Decision(kind="deny"), by=TEST_PERSON, via="rest")
        done = await h.host.runner.wait(session.id, timeout=60)
        ran, refused = await h.host.store.list_tool_calls(done.id)
    assert "outside the workspace" in (ran.result or ""), ran.result
    assert refused.status == "denied"


async def test_an_admin_can_forbid_commands_outside_the_sandbox(tmp_path: Path, pool: McpPool) -> None:
    workspace = workspace_with_instructions(tmp_path)
    script = [outside("id"), Reply(text="done")]
    settings = {"policies": {EXEC: "always_allow"}, "sandbox": {"allow_unconfined": False}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert await h.host.broker.pending() == []
    assert record.status == "denied" and "sandbox.allow_unconfined" in (record.result or "")
