"""The fence between named agents in a running host (issue 19): with the shell allowed outright
(`Bash(cat *)`, the shell's `always_allow`), a session of one agent still cannot read or write the
other's files through the shell or a file tool, by `..`, absolute path, symlink, `cd` or redirection;
its own files work as before, and a host with one agent is not fenced at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

READ = "mcp__file__read_file"
EXEC = "mcp__shell__exec"
SECRET = "alpha's secret 91c2"
ALLOW_EVERYTHING = {
    "policies": {EXEC: "always_allow", READ: "always_allow"},
    "permissions": {"allow": ["Bash(cat *)", "Bash(echo *)", "Bash(cd *)"]},
}


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def side_by_side(tmp_path: Path) -> tuple[Path, Path]:
    alpha, beta = (tmp_path / "alpha").resolve(), (tmp_path / "beta").resolve()
    alpha.mkdir()
    beta.mkdir()
    (alpha / "secret.txt").write_text(SECRET)
    (beta / "own.txt").write_text("beta's own words")
    return alpha, beta


async def test_a_session_cannot_reach_the_other_agents_files_even_with_the_shell_allowed(tmp_path, pool: McpPool):
    alpha, beta = side_by_side(tmp_path)
    (beta / "link.txt").symlink_to(alpha / "secret.txt")
    escapes = [
        call(EXEC, command="cat ../alpha/secret.txt"),
        call(EXEC, command=f"cat {alpha}/secret.txt"),
        call(EXEC, command="cat link.txt"),
        call(EXEC, command="cd ../alpha && cat secret.txt"),
        call(EXEC, command="echo owned > ../alpha/owned.txt"),
        call(READ, path=str(alpha / "secret.txt")),
    ]
    script = [*escapes, call(EXEC, command="cat own.txt"), Reply(text="done")]
    agents = [{"id": "alpha", "workspace": str(alpha)}, {"id": "beta", "workspace": str(beta)}]
    async with scripted_host(tmp_path, script, pool=pool, agents=agents, **ALLOW_EVERYTHING) as h:
        session = await h.run("read alpha's secret", SessionOptions(agent="beta"), timeout=60)
        assert session.status == "completed"
        *refused, own = await h.host.store.list_tool_calls(session.id)
        assert len(refused) == len(escapes)
        for record in refused:
            assert record.status == "denied", record
            assert "belongs to agent 'alpha'; each agent works only in its own workspace" in (record.result or "")
            assert SECRET not in (record.result or "")
        assert own.status == "done" and "beta's own words" in (own.result or "")
        assert not (alpha / "owned.txt").exists()
        assert await h.host.broker.pending() == []  # denied outright, nobody was asked


async def test_a_host_with_one_agent_is_not_fenced(tmp_path, pool: McpPool):
    alpha, _ = side_by_side(tmp_path)
    # Its command still runs in the sandbox, which shows it its own workspace: alpha's folder here.
    script = [call(EXEC, command=f"cat {alpha}/secret.txt"), Reply(text="read it")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=alpha, **ALLOW_EVERYTHING) as h:
        assert h.host.runner.fence_for(None) is None
        session = await h.run("read the file")
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "done" and SECRET in (record.result or "")
