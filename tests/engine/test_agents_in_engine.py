"""Named agents in running sessions (issue 19): each session works in its agent's workspace with its
model, mode, servers and rules; neither agent reaches the other's files, by path, `..`, symlink
or shell; the prompt carries the agent's own bootstrap files and memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.agents import UnknownAgent
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.skills.catalog import WORKSPACE_SKILLS
from backend.workspace_trust import folder
from backend.testing import Reply, ScriptedToolCall
from backend.domain.models import Session
from backend.testing.harness import Harness, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

READ = "mcp__file__read_file"
WRITE = "mcp__file__write_file"
EXEC = "mcp__shell__exec"
SECRET = "alpha's secret 7f3a"


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


async def run_denying(h: Harness, prompt: str, options: SessionOptions | None = None) -> Session:
    """Run a session to its end, denying whatever it asks a person (an escape that asks never runs)."""
    session = await h.start(prompt, options)
    done = asyncio.ensure_future(h.host.runner.wait(session.id, timeout=60))
    while not done.done():
        asked = asyncio.ensure_future(h.next_approval(timeout=60))
        await asyncio.wait({done, asked}, return_when=asyncio.FIRST_COMPLETED)
        if asked.done():
            await h.answer(asked.result(), Decision(kind="deny", message="not yours"))
        else:
            asked.cancel()
    return done.result()


def two_agents(tmp_path: Path, **beta: object) -> dict[str, object]:
    """Settings with agents alpha and beta in folders of their own, side by side."""
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir(exist_ok=True)
    (tmp_path / "alpha" / "secret.txt").write_text(SECRET)
    return {
        "agents": [
            {
                "id": "alpha",
                "workspace": str(tmp_path / "alpha"),
                "model": "openai/alpha-model",
                "mode": "ask",
                "permissions": {"deny": [WRITE]},
            },
            {"id": "beta", "workspace": str(tmp_path / "beta"), "model": "openai/beta-model", **beta},
        ],
        # Globally, writes in the workspace run unasked: only the agents' own rules and the
        # servers' confinement stand between a session and the other agent's files.
        "permissions": {"allow": [f"{WRITE}(**)"]},
    }


async def test_each_session_works_in_its_agents_workspace_with_its_model_and_mode(tmp_path, pool: McpPool):
    script = [Reply(text="alpha here"), Reply(text="beta here"), Reply(text="main here")]
    async with scripted_host(tmp_path, script, pool=pool, **two_agents(tmp_path)) as h:
        alpha = await h.run("who are you?", SessionOptions(agent="alpha"))
        beta = await h.run("who are you?", SessionOptions(agent="beta"))
        main = await h.run("who are you?")
        assert (alpha.agent_id, alpha.workspace, alpha.mode) == ("alpha", str((tmp_path / "alpha").resolve()), "ask")
        assert (beta.agent_id, beta.workspace, beta.mode) == ("beta", str((tmp_path / "beta").resolve()), "agent")
        assert (main.agent_id, main.workspace) == ("main", str(h.workspace))
        # What the model server received: each agent's own model, the configured one for main.
        assert [r.model for r in h.model.requests] == ["alpha-model", "beta-model", "scripted"]
        assert str((tmp_path / "alpha").resolve()) in (h.model.requests[0].system or "")


async def test_an_unknown_agent_is_refused_and_leaves_no_session(tmp_path, pool: McpPool):
    async with scripted_host(tmp_path, [], pool=pool, **two_agents(tmp_path)) as h:
        with pytest.raises(UnknownAgent, match="no agent 'ghost'"):
            await h.host.sessions.create(options=SessionOptions(agent="ghost"))
        assert await h.host.store.list_sessions() == []


async def test_each_agents_prompt_carries_its_own_bootstrap_files_memory_and_skills_only(tmp_path, pool: McpPool):
    settings = two_agents(tmp_path)
    (tmp_path / "alpha" / "AGENTS.md").write_text("ALPHA-INSTRUCTIONS")
    (tmp_path / "alpha" / "memory").mkdir()
    (tmp_path / "alpha" / "memory" / "MEMORY.md").write_text("ALPHA-MEMORY")
    (tmp_path / "beta" / "AGENTS.md").write_text("BETA-INSTRUCTIONS")
    skill = tmp_path / "alpha" / WORKSPACE_SKILLS / "alpha-only"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: alpha-only\ndescription: ALPHA-SKILL\n---\nDo alpha things.\n")
    async with scripted_host(tmp_path, [Reply(text="a"), Reply(text="b")], pool=pool, **settings) as h:
        h.host.skills.trust.trust(folder(skill.parent))  # as `overseer trust` would: untrusted, it is left out
        await h.run("hi", SessionOptions(agent="alpha"))
        await h.run("hi", SessionOptions(agent="beta"))
        alpha_prompt, beta_prompt = (r.system or "" for r in h.model.requests)
        assert "ALPHA-INSTRUCTIONS" in alpha_prompt and "ALPHA-MEMORY" in alpha_prompt
        assert "BETA-INSTRUCTIONS" not in alpha_prompt
        assert "ALPHA-SKILL" in alpha_prompt and "ALPHA-SKILL" not in beta_prompt
        assert "BETA-INSTRUCTIONS" in beta_prompt
        assert "ALPHA-INSTRUCTIONS" not in beta_prompt and "ALPHA-MEMORY" not in beta_prompt


async def test_an_agents_deny_rule_is_added_to_the_global_rules_and_wins(tmp_path, pool: McpPool):
    settings = two_agents(tmp_path)
    settings["agents"][0]["mode"] = None  # type: ignore[index]
    script = [call(WRITE, path="a.txt", content="x"), Reply(text="refused"), call(WRITE, path="b.txt", content="x"), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        alpha = await h.run("write", SessionOptions(agent="alpha"))
        beta = await h.run("write", SessionOptions(agent="beta"))
        [refused] = await h.host.store.list_tool_calls(alpha.id)
        assert refused.status == "denied" and "agent:alpha" in (refused.result or "")
        assert not (tmp_path / "alpha" / "a.txt").exists()
        [written] = await h.host.store.list_tool_calls(beta.id)
        assert written.status == "done" and (tmp_path / "beta" / "b.txt").read_text() == "x"


async def test_an_agent_is_offered_only_its_servers_and_the_gate_refuses_the_others(tmp_path, pool: McpPool):
    settings = two_agents(tmp_path, servers=["file"])
    script = [call(EXEC, command="touch escaped.txt"), Reply(text="no shell")]
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        beta = await h.run("use the shell", SessionOptions(agent="beta"))
        offered = set(h.model.requests[0].tool_names)
        assert READ in offered and EXEC not in offered
        [record] = await h.host.store.list_tool_calls(beta.id)
        assert record.status == "error" and "does not offer the tool 'mcp__shell__exec'" in (record.result or "")
        assert not (tmp_path / "beta" / "escaped.txt").exists()
        assert await h.host.broker.pending() == []


async def test_neither_agent_reads_or_writes_the_others_files_by_path_dotdot_or_symlink(tmp_path, pool: McpPool):
    settings = two_agents(tmp_path)
    alpha_dir = (tmp_path / "alpha").resolve()
    (tmp_path / "beta" / "link.txt").symlink_to(alpha_dir / "secret.txt")
    (tmp_path / "beta" / "linkdir").symlink_to(alpha_dir)
    attempts = [
        call(READ, path=str(alpha_dir / "secret.txt")),
        call(READ, path="../alpha/secret.txt"),
        call(READ, path="link.txt"),
        call(READ, path="linkdir/secret.txt"),
        call(WRITE, path=str(alpha_dir / "owned.txt"), content="beta was here"),
        call(WRITE, path="../alpha/owned.txt", content="beta was here"),
        call(WRITE, path="linkdir/owned.txt", content="beta was here"),
        call(WRITE, path="link.txt", content="overwritten"),
    ]
    async with scripted_host(tmp_path, [*attempts, Reply(text="could not")], pool=pool, **settings) as h:
        beta = await run_denying(h, "read alpha's secret", SessionOptions(agent="beta"))
        records = await h.host.store.list_tool_calls(beta.id)
        assert len(records) == len(attempts)
        for record in records:
            assert record.status != "done" or record.is_error, record
            assert SECRET not in (record.result or "")
        assert not (alpha_dir / "owned.txt").exists()
        assert (alpha_dir / "secret.txt").read_text() == SECRET


async def test_a_shell_command_reaching_into_the_other_agents_workspace_is_denied_without_asking(tmp_path, pool: McpPool):
    settings = two_agents(tmp_path)
    script = [call(EXEC, command="cat ../alpha/secret.txt"), Reply(text="denied")]
    async with scripted_host(tmp_path, script, pool=pool, **settings) as h:
        done = await h.run("cat it", SessionOptions(agent="beta"))
        [record] = await h.host.store.list_tool_calls(done.id)
        assert record.status == "denied" and SECRET not in (record.result or "")
        assert "belongs to agent 'alpha'" in (record.result or "")  # the fence (agent_fence), not a person
        assert await h.host.broker.pending() == []
