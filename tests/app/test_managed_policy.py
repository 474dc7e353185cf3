"""The managed policy file at work (backend/app/managed_policy.py): read or refused at start, and
above every other layer in a real host (real store, real shell server, the auto-approve switch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.app.host import Host, server_configs
from backend.app.managed_policy import (
    MANAGED_POLICY_ENV,
    LockedByManagedPolicy,
    ManagedPolicyError,
    load_managed_policy,
    managed_policy_path,
)
from backend.app.session_edits import SessionEdit
from backend.auth import Principal
from backend.config import PermissionsConfig, Settings
from backend.domain.models import Decision
from backend.domain.session_options import SessionOptions
from backend.mcp.config import McpServerConfig
from backend.rules.managed import NO_MANAGED_POLICY
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import only_servers, scripted_host
from tests.hooks.hook_scripts import ALLOW_ALL, command, hooks_block, install

pytestmark = pytest.mark.asyncio(loop_scope="module")

ADMIN = Principal(name="root", role="admin", kind="user")
ANN = Principal(name="ann", role="approver", kind="user")

CURL_DENIED = """\
permissions:
  deny: ["Bash(curl *)"]
disable_allow_always: true
"""


def shell(command: str, id: str) -> ScriptedToolCall:
    return ScriptedToolCall(name="mcp__shell__exec", arguments={"command": command}, id=id)


@pytest.fixture
def managed_file(tmp_path, monkeypatch):
    """Write the managed file and point OVERSEER_MANAGED_POLICY at it."""

    def write(text: str) -> Path:
        path = tmp_path / "etc" / "managed.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        monkeypatch.setenv(MANAGED_POLICY_ENV, str(path))
        return path

    return write


async def test_no_file_means_no_managed_layer(tmp_path):
    assert load_managed_policy(tmp_path / "absent.yaml") is NO_MANAGED_POLICY


async def test_the_env_var_points_at_the_file_and_the_default_is_under_etc():
    assert managed_policy_path({}) == Path("/etc/overseer/managed.yaml")
    assert managed_policy_path({MANAGED_POLICY_ENV: "/srv/policy.yaml"}) == Path("/srv/policy.yaml")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("permissions: [oops", "is not valid YAML"),
        ("- a list\n", "must be a mapping"),
        ("disable_alow_always: true\n", "disable_alow_always"),
        ("permissions:\n  deny: ['Bash(curl *']\n", "permissions"),
        ("allowed_mcp_servers: [{name: a, url: b}]\n", "allowed_mcp_servers.0"),
    ],
)
async def test_a_malformed_file_is_refused_naming_the_file_and_what_is_wrong(tmp_path, text, said):
    path = tmp_path / "managed.yaml"
    path.write_text(text)
    with pytest.raises(ManagedPolicyError) as refused:
        load_managed_policy(path)
    assert str(path) in str(refused.value) and said in str(refused.value)


async def test_the_host_refuses_to_start_with_a_malformed_file(tmp_path, managed_file):
    path = managed_file("disable_auto_approve: maybe\n")
    with pytest.raises(ManagedPolicyError, match="disable_auto_approve"):
        Host(Settings(data_dir=tmp_path / "data", workspace=tmp_path))
    assert str(path) in str(load_error(path))


def load_error(path: Path) -> Exception:
    try:
        load_managed_policy(path)
    except ManagedPolicyError as exc:
        return exc
    raise AssertionError("no error")


async def test_the_host_refuses_sandbox_off_when_unsandboxed_runs_are_turned_off(tmp_path, managed_file):
    path = managed_file("disable_unsandboxed: true\n")
    with pytest.raises(ManagedPolicyError) as refused:
        Host(Settings(data_dir=tmp_path / "data", workspace=tmp_path, sandbox="off"))
    assert f"sandbox: off is refused: locked by managed policy ({path}: disable_unsandboxed)" in str(refused.value)


async def test_a_server_the_allow_list_does_not_admit_is_not_started(tmp_path, managed_file):
    managed_file("allowed_mcp_servers: [{command: 'npx -y @corp/*'}]\n")
    servers = {
        "corp": McpServerConfig(command="npx", args=["-y", "@corp/tools"]),
        "evil": McpServerConfig(command="npx", args=["-y", "evil-mcp"]),
    }
    settings = Settings(data_dir=tmp_path / "data", workspace=tmp_path, mcp_servers=servers)
    found = server_configs(settings)
    assert "corp" in found and "evil" not in found
    assert "file" in found  # Overseer's own servers are not MCP servers someone added


async def test_an_agent_may_name_a_server_the_allow_list_keeps_from_starting(tmp_path, pool, managed_file):
    managed_file("allowed_mcp_servers: [github]\n")
    servers = {"evil": McpServerConfig(command="npx", args=["-y", "evil-mcp"])}
    agents = [{"id": "helper", "servers": ["shell", "evil"]}]
    async with scripted_host(tmp_path, [], pool=pool, mcp_servers=servers | only_servers("shell"), agents=agents) as h:
        assert h.host.agents.get("helper") is not None
        [evil] = [s for s in h.host.servers.servers() if s.status.name == "evil"]
        assert evil.status.state == "stopped" and "not in allowed_mcp_servers" in (evil.status.error or "")


async def test_a_managed_deny_denies_curl_despite_an_allow_rule_and_auto_approve(tmp_path, pool, managed_file):
    managed_file(CURL_DENIED)
    script = [
        Reply(tool_calls=[shell("curl https://example.com", "c1"), shell("echo ok", "c2")]),
        Reply(text="done"),
    ]
    permissions = {"allow": ["Bash(curl *)"]}
    async with scripted_host(
        tmp_path, script, pool=pool, permissions=permissions, mcp_servers=only_servers("shell")
    ) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await h.host.session_edits.edit(session.id, SessionEdit(auto_approve=True), by=ANN, via="rest")
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        calls = {c.id: c.status for c in await h.host.store.list_tool_calls(session.id)}
        assert calls == {"c1": "denied", "c2": "done"}  # echo asked and auto-approve answered it
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        assert audit["c1"].decision == "deny" and "Managed policy: deny rule Bash(curl *)" in audit["c1"].detail


async def test_a_managed_ask_waits_for_a_person_with_auto_approve_on(tmp_path, pool, managed_file):
    managed_file("permissions:\n  ask: ['Bash(echo *)']\n")
    script = [Reply(tool_calls=[shell("echo hi", "c1")]), Reply(text="done")]
    async with scripted_host(
        tmp_path, script, pool=pool, permissions={"allow": ["Bash"]}, mcp_servers=only_servers("shell")
    ) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        await h.host.session_edits.edit(session.id, SessionEdit(auto_approve=True), by=ANN, via="rest")
        await h.host.runner.send(session.id, "go", author=ANN.decider("rest"))
        approval = await h.next_approval()
        assert approval.reason.startswith("Managed policy: ask rule Bash(echo *)")
        assert not await h.host.auto_approver.consider(approval)  # the door refuses an automatic answer
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once"), by=ANN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"


async def test_always_allow_is_refused_from_the_door_when_the_managed_policy_turns_it_off(tmp_path, pool, managed_file):
    path = managed_file(CURL_DENIED)
    script = [Reply(tool_calls=[shell("ls", "c1")]), Reply(text="done")]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.start("list")
        approval = await h.next_approval()
        with pytest.raises(LockedByManagedPolicy) as refused:
            await h.answer(approval, Decision(kind="allow_always", rules=approval.suggested_rules), by=ADMIN)
        assert str(refused.value) == (
            f'"always allow" is turned off: locked by managed policy ({path}: disable_allow_always)'
        )
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once"), by=ADMIN)
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        assert h.host.policies.permissions.allow == []


async def test_an_admin_cannot_allow_what_the_managed_policy_denies(tmp_path, pool, managed_file):
    path = managed_file(CURL_DENIED)
    async with scripted_host(tmp_path, [], pool=pool, mcp_servers=only_servers("shell")) as h:
        with pytest.raises(LockedByManagedPolicy) as refused:
            h.host.policies.set_permissions(PermissionsConfig(allow=["Bash(curl *)"]))
        assert str(refused.value) == f"locked by managed policy ({path}: permissions.deny 'Bash(curl *)')"
        assert h.host.policies.permissions.allow == []


async def test_an_admin_cannot_set_always_allow_on_a_tool_the_managed_policy_asks_about(tmp_path, pool, managed_file):
    path = managed_file("permissions:\n  ask: ['mcp__github__delete_repo']\n")
    async with scripted_host(tmp_path, [], pool=pool, mcp_servers=only_servers("shell")) as h:
        with pytest.raises(LockedByManagedPolicy) as refused:
            h.host.policies.set_policies({"mcp__github__delete_repo": "always_allow"})
        assert str(refused.value) == f"locked by managed policy ({path}: permissions.ask 'mcp__github__delete_repo')"
        assert "mcp__github__delete_repo" not in h.host.policies.policies
        h.host.policies.set_policies({"mcp__github__delete_repo": "deny"})  # stricter is anyone's to add


async def test_no_command_runs_outside_the_sandbox_when_unsandboxed_runs_are_turned_off(tmp_path, pool, managed_file):
    managed_file("disable_unsandboxed: true\n")
    async with scripted_host(tmp_path, [], pool=pool, mcp_servers=only_servers("shell")) as h:
        assert h.host.gate.confinement is not None and h.host.gate.confinement.allow_unconfined is False


async def test_the_auto_approve_switch_is_refused_when_the_managed_policy_turns_it_off(tmp_path, pool, managed_file):
    path = managed_file("disable_auto_approve: true\n")
    async with scripted_host(tmp_path, [], pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.host.runner.create(options=SessionOptions(created_by=ANN.decider("rest")))
        with pytest.raises(LockedByManagedPolicy, match=f"auto-approve is turned off: .*{path}: disable_auto_approve"):
            await h.host.session_edits.edit(session.id, SessionEdit(auto_approve=True), by=ANN, via="rest")
        assert (await h.host.store.get_session(session.id)).auto_approve is None


async def test_the_managed_hooks_always_run_and_a_hooks_allow_never_beats_a_managed_deny(tmp_path, pool, managed_file):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    allow_all = install(workspace, "allow_all", ALLOW_ALL)
    hooks = hooks_block(PreToolUse=[("Bash", [command(allow_all)])])
    managed_file(json.dumps({"permissions": {"deny": ["Bash(curl *)"]}, "hooks": hooks}))
    script = [
        Reply(tool_calls=[shell("curl https://example.com", "c1"), shell("echo hi", "c2")]),
        Reply(text="done"),
    ]
    async with scripted_host(tmp_path, script, pool=pool, mcp_servers=only_servers("shell")) as h:
        session = await h.start("go")
        assert (await h.host.runner.wait(session.id, timeout=30)).status == "completed"
        calls = {c.id: c.status for c in await h.host.store.list_tool_calls(session.id)}
        assert calls == {"c1": "denied", "c2": "done"}
        assert await h.host.store.list_approvals(session_id=session.id) == []  # the hook answered echo's ask
        audit = {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session.id)}
        assert audit["c1"].decision == "deny" and "Managed policy" in audit["c1"].detail
        assert audit["c2"].decision == "allow" and allow_all in (audit["c2"].decider.name if audit["c2"].decider else "")
