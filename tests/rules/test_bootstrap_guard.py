"""Bootstrap files are the agent's instructions: every write asks a person, whatever else allows it.

The unit tests look at the guard's verdicts; the rest drive a real host (the scripted model, the
real file and shell servers, the gate, the approval door) and look at the files on disk.
"""

from __future__ import annotations

import builtins
import os

import pytest
import yaml
from pydantic import ValidationError

from backend.config import Settings
from backend.domain.models import Approval, Decision, utcnow
from backend.rules.bootstrap_guard import (
    CHANGE_PREFIX,
    INSTRUCTION_FILES,
    BootstrapGuard,
    InstructionChange,
    as_once,
    is_instruction_change,
    recheck,
    suggested_rules,
)
from backend.rules.policy_engine import Evaluation
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import only_servers, scripted_host
from tests.rules.support import SHELL, WRITE, call, shell

# The shared file + shell pool (tests/conftest.py) runs on the module's event loop.
on_pool = pytest.mark.asyncio(loop_scope="module")
BOUND = 60  # seconds to wait for a question: generous, the machine is shared; it comes much sooner

ALLOWED = Evaluation(verdict="allow", reason="policy mcp__file__write_file = always_allow (config)")
WRITES_ALLOWED = {"mcp__file__write_file": "always_allow", "mcp__shell__exec": "always_allow"}
"""Policies under which every write and command would run unasked, but for the guard."""


def write(path: str, content: str = "new\n", id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name=WRITE, arguments={"path": path, "content": content}, id=id)


def run(command: str) -> ScriptedToolCall:
    return ScriptedToolCall(name=SHELL, arguments={"command": command})


def seed(workspace, *names: str) -> None:
    for name in names:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("original\n")


# --- the guard's verdicts ---------------------------------------------------------------------


def test_an_allowed_write_to_an_instruction_file_becomes_a_question_that_says_so():
    verdict = BootstrapGuard().review(call(WRITE, path="AGENTS.md", content="x"), ALLOWED)
    assert isinstance(verdict, InstructionChange)
    assert verdict.verdict == "ask" and verdict.files == ("AGENTS.md",)
    assert verdict.reason.startswith("The agent wants to change its own instructions: AGENTS.md.")
    assert verdict.source == "protect_bootstrap"


@pytest.mark.parametrize(
    "path", ["overseer.yaml", ".overseer/skills/a/SKILL.md", ".claude/settings.json", ".claude/hooks/lint.sh"]
)
def test_an_allowed_write_to_the_workspaces_own_config_skills_or_claude_hooks_asks_as_an_instruction_change(path):
    verdict = BootstrapGuard().review(call(WRITE, path=path, content="x"), ALLOWED)
    assert isinstance(verdict, InstructionChange) and verdict.verdict == "ask"
    assert verdict.reason.startswith(CHANGE_PREFIX)


def test_a_shell_command_rewriting_a_hook_script_asks_as_an_instruction_change():
    # Hooks run with the agent's verdicts in their hands: an agent editing one edits its own rules.
    verdict = BootstrapGuard().review(shell("echo 'exit 0' > .claude/hooks/lint.sh"), ALLOWED)
    assert isinstance(verdict, InstructionChange) and verdict.files == (".claude/",)


def test_the_hosts_own_scratch_under_dot_overseer_is_not_an_instruction_change():
    assert BootstrapGuard().review(call(WRITE, path=".overseer/spill/x", content="x"), ALLOWED) is ALLOWED


def test_a_protected_folder_named_in_the_config_keeps_its_trailing_slash():
    guard = BootstrapGuard.from_setting(["./.overseer/skills/", "docs//RULES.md"])
    assert guard.files == (".overseer/skills/", "docs/RULES.md")
    assert guard.touched(call(WRITE, path=".overseer/skills/a/SKILL.md", content="x")) == (".overseer/skills/",)


def test_a_deny_stays_a_deny_and_other_calls_keep_their_verdict():
    denied = Evaluation(verdict="deny", reason="deny rule Edit(AGENTS.md) (user)")
    guard = BootstrapGuard()
    assert guard.review(call(WRITE, path="AGENTS.md", content="x"), denied) is denied
    assert guard.review(call(WRITE, path="notes.md", content="x"), ALLOWED) is ALLOWED
    assert guard.review(shell("cat AGENTS.md"), ALLOWED) is ALLOWED


def test_the_config_can_lift_the_protection_or_name_the_files():
    assert Settings().protect_bootstrap is True
    assert BootstrapGuard.from_setting(True).files == INSTRUCTION_FILES
    off = BootstrapGuard.from_setting(False)
    assert off.review(call(WRITE, path="AGENTS.md", content="x"), ALLOWED) is ALLOWED
    only = BootstrapGuard.from_setting(["./SOUL.md", "docs/RULES.md"])
    assert only.files == ("SOUL.md", "docs/RULES.md")
    assert only.review(call(WRITE, path="AGENTS.md", content="x"), ALLOWED) is ALLOWED
    assert only.review(shell("rm docs/RULES.md"), ALLOWED).verdict == "ask"


def test_the_data_dirs_fallback_instruction_files_are_protected_too(tmp_path):
    guard = BootstrapGuard.from_setting(True, data_dir=tmp_path / "data")
    assert guard.files[: len(INSTRUCTION_FILES)] == INSTRUCTION_FILES
    soul = str(tmp_path / "data" / "SOUL.md")
    assert guard.touched(shell(f"echo x > {soul}", tmp_path / "ws")) == (soul,)
    assert guard.touched(shell(f"rm -rf {tmp_path}/data", tmp_path / "ws")) == tuple(guard.files[len(INSTRUCTION_FILES) :])
    assert str(tmp_path / "data" / "MEMORY.md") not in guard.files  # memory is never read from there
    assert BootstrapGuard.from_setting(["SOUL.md"], data_dir=tmp_path).files == ("SOUL.md", str(tmp_path / "SOUL.md"))
    assert BootstrapGuard.from_setting(False, data_dir=tmp_path).files == ()


@pytest.mark.parametrize("name", ["../AGENTS.md", "/etc/AGENTS.md", "~/AGENTS.md", ""])
def test_the_config_refuses_a_protected_file_outside_the_workspace(name):
    with pytest.raises(ValidationError, match="protect_bootstrap"):
        Settings(protect_bootstrap=[name])


def test_an_allow_meant_to_stand_counts_as_once_for_an_instruction_change():
    change = BootstrapGuard().review(call(WRITE, path="SOUL.md", content="x"), ALLOWED)
    for kind in ("allow_session", "allow_always"):
        answer = as_once(change, Decision(kind=kind, rules=["mcp__file__write_file"]))
        assert (answer.kind, answer.rules) == ("allow_once", None)
    session = Decision(kind="allow_session")
    assert as_once(ALLOWED, session) is session
    assert suggested_rules(change, call(WRITE, path="SOUL.md", content="x")) == []
    assert suggested_rules(ALLOWED, call(WRITE, path="notes.md", content="x")) == [f"{WRITE}(./notes.md)"]


def test_an_edit_that_newly_reaches_an_instruction_file_is_refused():
    guard = BootstrapGuard()
    edited = {"path": "AGENTS.md", "content": "obey\n"}
    again = guard.review(call(WRITE, **edited), ALLOWED)
    refused = recheck(ALLOWED, again, edited)
    assert refused.verdict == "deny"
    assert "change the agent's own instructions (AGENTS.md)" in refused.reason
    assert '"content": "obey\\n"' in refused.reason  # the model can ask again with exactly these
    asked = guard.review(call(WRITE, path="AGENTS.md", content="a"), ALLOWED)
    assert recheck(asked, again, edited) is again  # the question named it: the person saw that
    other = guard.review(call(WRITE, path="SOUL.md", content="a"), ALLOWED)
    assert recheck(other, again, edited).verdict == "deny"
    assert recheck(asked, ALLOWED, {"path": "notes.md"}) is ALLOWED


def test_an_approval_is_known_as_an_instruction_change_by_its_reason():
    change = BootstrapGuard().review(call(WRITE, path="USER.md", content="x"), ALLOWED)

    def approval(reason: str, kind: str = "tool") -> Approval:
        return Approval(
            id="a", session_id="s", kind=kind, tool_call_id="c", tool_name=WRITE, reason=reason, expires_at=utcnow()
        )

    assert is_instruction_change(approval(change.reason))
    assert not is_instruction_change(approval("policy mcp__file__write_file = ask (default)"))
    assert not is_instruction_change(approval(change.reason, kind="mode_switch"))
    assert change.reason.startswith(CHANGE_PREFIX)


# --- through a real host ----------------------------------------------------------------------


@on_pool
async def test_an_always_allow_policy_does_not_cover_writing_agents_md(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.md")]), Reply(tool_calls=[write("AGENTS.md", "obey\n")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, pool=pool) as h:
        seed(h.workspace, "AGENTS.md")
        session = await h.start("write")
        approval = await h.next_approval(timeout=BOUND)
        assert (approval.tool_name, approval.arguments["path"]) == (WRITE, "AGENTS.md")
        assert approval.reason.startswith("The agent wants to change its own instructions: AGENTS.md.")
        assert approval.suggested_rules == []
        assert (h.workspace / "notes.md").read_text() == "new\n"  # the harmless write ran unasked
        assert (h.workspace / "AGENTS.md").read_text() == "original\n"
        await h.answer(approval, Decision(kind="allow_once"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (h.workspace / "AGENTS.md").read_text() == "obey\n"
        deciders = {e.arguments["path"]: e.decided_by for e in await h.host.store.list_audit()}
        assert deciders == {"notes.md": "policy", "AGENTS.md": "user"}


@on_pool
async def test_allow_rules_in_the_config_do_not_cover_an_instruction_change(tmp_path, pool):
    script = [Reply(tool_calls=[run("echo hi > notes.md")]), Reply(tool_calls=[run("echo obey > USER.md")]), Reply(text="ok")]
    rules = {"allow": ["mcp__file__write_file", "Bash(echo *)"]}
    async with scripted_host(tmp_path, script, permissions=rules, pool=pool) as h:
        session = await h.start("edit")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.arguments == {"command": "echo obey > USER.md"} and is_instruction_change(approval)
        assert (h.workspace / "notes.md").read_text() == "hi\n"  # the rules allowed this one
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        assert not (h.workspace / "USER.md").exists()


@on_pool
async def test_a_session_allow_of_the_whole_file_server_does_not_cover_writing_soul_md(tmp_path, pool):
    script = [
        Reply(tool_calls=[write("notes.md")]),
        Reply(tool_calls=[write("more.md")]),
        Reply(tool_calls=[write("SOUL.md")]),
        Reply(text="ok"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        seed(h.workspace, "SOUL.md")
        session = await h.start("write")
        await h.answer(await h.next_approval(timeout=BOUND), Decision(kind="allow_session", rules=["mcp__file"]))
        approval = await h.next_approval(timeout=BOUND)
        assert approval.arguments["path"] == "SOUL.md" and is_instruction_change(approval)
        assert (h.workspace / "more.md").exists()  # covered by the session allow, unasked
        await h.answer(approval, Decision(kind="deny", message="keep your soul"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.status == "completed" and done.session_rules == ["mcp__file"]
        assert (h.workspace / "SOUL.md").read_text() == "original\n"
        assert "keep your soul" in h.model.requests[-1].tool_results()[-1].text


@on_pool
async def test_a_session_allow_given_meanwhile_does_not_answer_a_pending_instruction_change(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.md", id="c1"), write("AGENTS.md", id="c2")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write both")
        first, second = await h.next_approval(timeout=BOUND), await h.next_approval(timeout=BOUND)
        harmless, change = (first, second) if first.tool_call_id == "c1" else (second, first)
        await h.answer(harmless, Decision(kind="allow_session", rules=["mcp__file"]))
        # The new rule answers what it covers before its own call runs: after that call's result,
        # a covered approval would have been answered.
        ran = await h.next_event("tool.result", timeout=BOUND)
        assert ran.data["id"] == "c1"
        assert (await h.host.store.get_approval(change.id)).status == "pending"
        await h.answer(change, Decision(kind="deny"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (h.workspace / "notes.md").exists() and not (h.workspace / "AGENTS.md").exists()
        assert (await h.host.store.get_approval(change.id)).decided_by == "user"


@on_pool
async def test_allowing_an_instruction_change_for_the_session_or_always_counts_as_once(tmp_path, pool):
    script = [
        Reply(tool_calls=[write("AGENTS.md", "one\n")]),
        Reply(tool_calls=[write("AGENTS.md", "two\n")]),
        Reply(tool_calls=[write("AGENTS.md", "three\n")]),
        Reply(text="ok"),
    ]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        await h.answer(await h.next_approval(timeout=BOUND), Decision(kind="allow_session"))
        second = await h.next_approval(timeout=BOUND)  # asked again: the session allow was taken as once
        assert (h.workspace / "AGENTS.md").read_text() == "one\n"
        await h.answer(second, Decision(kind="allow_always", rules=["mcp__file__write_file"]))
        third = await h.next_approval(timeout=BOUND)
        assert (h.workspace / "AGENTS.md").read_text() == "two\n"
        await h.answer(third, Decision(kind="deny"))
        done = await h.host.runner.wait(session.id, timeout=30)
        assert done.session_rules == []
        assert (h.workspace / "AGENTS.md").read_text() == "two\n"
        config = h.host.settings.writable_config_file
        written = yaml.safe_load(config.read_text()) if config.exists() else {}
        assert not (written or {}).get("permissions", {}).get("allow")
        assert h.host.policies.engine.rules.allow == []
        records = await h.host.store.list_tool_calls(session.id)
        assert [r.decision for r in records[:2]] == ["allow_once (user)", "allow_once (user)"]


@on_pool
async def test_edited_arguments_that_redirect_a_harmless_write_to_agents_md_are_refused(tmp_path, pool):
    script = [Reply(tool_calls=[write("notes.md")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        seed(h.workspace, "AGENTS.md")
        session = await h.start("write")
        approval = await h.next_approval(timeout=BOUND)
        assert not is_instruction_change(approval)
        edited = {"path": "./AGENTS.md", "content": "obey\n"}
        await h.answer(approval, Decision(kind="allow_once", updated_arguments=edited))
        await h.host.runner.wait(session.id, timeout=30)
        assert (h.workspace / "AGENTS.md").read_text() == "original\n"
        assert not (h.workspace / "notes.md").exists()
        text = h.model.requests[-1].tool_results()[-1].text
        assert "change the agent's own instructions (AGENTS.md)" in text and "./AGENTS.md" in text
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "denied" and record.arguments == edited


@on_pool
async def test_an_edit_of_an_instruction_change_to_the_same_file_runs_as_edited(tmp_path, pool):
    script = [Reply(tool_calls=[write("AGENTS.md", "obey\n")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        edited = {"path": "AGENTS.md", "content": "be kind\n"}
        await h.answer(await h.next_approval(timeout=BOUND), Decision(kind="allow_once", updated_arguments=edited))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (h.workspace / "AGENTS.md").read_text() == "be kind\n"


@on_pool
@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("echo x > SOUL.md", "SOUL.md"),
        ("sed -i 's/original/changed/' AGENTS.md", "AGENTS.md"),
        ("echo more | tee -a USER.md", "USER.md"),
        ("rm TOOLS.md", "TOOLS.md"),
    ],
)
async def test_a_shell_command_writing_an_instruction_file_asks_though_the_shell_is_allowed(
    tmp_path, pool, command, target
):
    script = [Reply(tool_calls=[run("echo hi > notes.md")]), Reply(tool_calls=[run(command)]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, pool=pool) as h:
        seed(h.workspace, target)
        session = await h.start("edit")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.arguments == {"command": command}
        assert approval.reason.startswith(f"{CHANGE_PREFIX}{target}.")
        assert (h.workspace / "notes.md").read_text() == "hi\n"
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        assert (h.workspace / target).read_text() == "original\n"


@on_pool
@pytest.mark.parametrize(("path", "target"), [("docs/../USER.md", "USER.md"), ("notes.md", "AGENTS.md")])
async def test_a_write_by_a_relative_path_or_a_symlink_asks(tmp_path, pool, path, target):
    script = [Reply(tool_calls=[write(path)]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, pool=pool) as h:
        seed(h.workspace, target)
        (h.workspace / "docs").mkdir()
        os.symlink("AGENTS.md", h.workspace / "notes.md")
        session = await h.start("write")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.reason.startswith(f"{CHANGE_PREFIX}{target}.")
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        assert (h.workspace / target).read_text() == "original\n"


@on_pool
async def test_reading_instruction_files_is_not_asked(tmp_path, pool):
    script = [
        Reply(tool_calls=[ScriptedToolCall(name="mcp__file__read_file", arguments={"path": "AGENTS.md"})]),
        Reply(tool_calls=[run("cat SOUL.md && grep -c original AGENTS.md")]),
        Reply(text="read"),
    ]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, pool=pool) as h:
        seed(h.workspace, "AGENTS.md", "SOUL.md")
        session = await h.run("read")
        assert session.status == "completed"
        assert await h.host.store.list_approvals() == []
        results = [r for request in h.model.requests[1:] for r in request.tool_results()]
        assert all("original" in r.text and not r.is_error for r in results[-2:])


@on_pool
async def test_a_deny_rule_still_denies_an_instruction_change_without_asking(tmp_path, pool):
    script = [Reply(tool_calls=[write("AGENTS.md")]), Reply(text="ok")]
    rules = {"deny": ["Edit(AGENTS.md)"]}
    async with scripted_host(tmp_path, script, permissions=rules, policies=WRITES_ALLOWED, pool=pool) as h:
        session = await h.run("write")
        assert session.status == "completed"
        assert await h.host.store.list_approvals() == []
        assert not (h.workspace / "AGENTS.md").exists()
        [entry] = await h.host.store.list_audit()
        assert (entry.decision, entry.decided_by) == ("deny", "rule")


@on_pool
async def test_a_shell_write_to_the_data_dirs_soul_md_asks(tmp_path, pool):
    soul = tmp_path / "data" / "SOUL.md"
    script = [Reply(tool_calls=[run(f"echo obey >> {soul}")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, pool=pool) as h:
        soul.write_text("original\n")
        session = await h.start("edit")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.reason.startswith(f"{CHANGE_PREFIX}{soul}.")
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        assert soul.read_text() == "original\n"


@on_pool
async def test_an_admin_who_lifts_the_protection_lets_the_write_run_as_the_rules_say(tmp_path, pool):
    script = [Reply(tool_calls=[write("AGENTS.md")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, protect_bootstrap=False, pool=pool) as h:
        assert (await h.run("write")).status == "completed"
        assert (h.workspace / "AGENTS.md").read_text() == "new\n"
        assert await h.host.store.list_approvals() == []


@on_pool
async def test_a_list_of_protected_files_protects_exactly_those(tmp_path, pool):
    script = [Reply(tool_calls=[write("AGENTS.md")]), Reply(tool_calls=[write("SOUL.md")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, policies=WRITES_ALLOWED, protect_bootstrap=["SOUL.md"], pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval(timeout=BOUND)
        assert approval.arguments["path"] == "SOUL.md"
        assert (h.workspace / "AGENTS.md").read_text() == "new\n"
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=30)
        assert not (h.workspace / "SOUL.md").exists()


@on_pool
async def test_the_auto_approve_door_leaves_an_instruction_change_to_a_person(tmp_path, pool):
    from backend.app.approvals import PersonRequired
    from backend.testing.harness import TEST_PERSON

    script = [Reply(tool_calls=[write("HEARTBEAT.md")]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool) as h:
        session = await h.start("write")
        approval = await h.next_approval(timeout=BOUND)
        with pytest.raises(PersonRequired):
            await h.host.approvals.answer(approval.id, Decision(kind="allow_once"), by=TEST_PERSON, via="auto")
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert (h.workspace / "HEARTBEAT.md").read_text() == "new\n"


@on_pool
async def test_the_memory_tool_still_writes_memory_md_without_asking(tmp_path):
    save = ScriptedToolCall(name="mcp__memory__memory_save", arguments={"fact": "The user likes tea."})
    script = [Reply(tool_calls=[save]), Reply(text="saved")]
    async with scripted_host(tmp_path, script, mcp_servers=only_servers("memory")) as h:
        assert (await h.run("remember", timeout=60)).status == "completed"
        assert await h.host.store.list_approvals() == []
        assert "The user likes tea." in (h.workspace / "memory" / "MEMORY.md").read_text()


def test_approve_all_in_the_terminal_still_asks_the_person_about_an_instruction_change(
    tmp_path, monkeypatch, capsys
):
    from backend.cli import main
    from backend.testing import ScriptedModelServer
    from backend.testing.harness import only_servers_env

    workspace = tmp_path / "workspace"
    seed(workspace, "AGENTS.md")
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(workspace))
    for name, value in only_servers_env("file").items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    answers = iter(["n", ""])  # deny, with no reason; anything further is a closed stdin
    asked: list[str] = []

    def person(prompt: str = "") -> str:
        asked.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", person)
    with ScriptedModelServer() as model:
        monkeypatch.setenv("OVERSEER_MODEL", "openai/scripted")
        monkeypatch.setenv("OVERSEER_API_BASE", model.openai_base)
        monkeypatch.setenv("OVERSEER_API_KEY", "scripted")
        model.push(
            Reply(tool_calls=[write("notes.md")]), Reply(tool_calls=[write("AGENTS.md", "obey\n")]), Reply(text="done")
        )
        assert main(["run", "write", "--approve", "all"]) == 0
    assert (workspace / "notes.md").read_text() == "new\n"  # --approve all answered this one
    assert (workspace / "AGENTS.md").read_text() == "original\n"
    assert len(asked) == 2  # the decision, then the optional reason: only for AGENTS.md
    out = capsys.readouterr().out
    assert "--approve all does not cover the agent changing its own instructions" in out
    assert "why it asks: The agent wants to change its own instructions: AGENTS.md." in out
