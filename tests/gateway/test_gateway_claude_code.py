"""A client that is not ours: the Claude Code CLI bundled with claude-agent-sdk, with Overseer as a server.

The CLI gets the `.mcp.json` that `overseer mcp-config claude-code` prints (plus the scripted
model's settings), so it starts `overseer mcp` itself. Both models are the scripted server: the
CLI speaks its Anthropic API, the Overseer agent its OpenAI API.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import anyio
import claude_agent_sdk
from gateway_testkit import BOUND, embedded_env

from backend.gateway.client_config import client_config
from backend.testing import ModelRequest, Reply, ScriptedModelServer, ScriptedToolCall

CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
TASK = "What is 6 times 7?"


def both_models(request: ModelRequest) -> Reply:
    """Claude Code calls invoke_agent, then reports what came back; the Overseer agent answers."""
    if request.api == "openai":
        return Reply(
            text="The Overseer agent says 42." if request.last_prompt() == TASK else "unexpected task"
        )
    results = request.last_tool_results()
    if results:
        return Reply(text=f"Overseer answered: {results[0]}")
    return Reply(
        tool_calls=[ScriptedToolCall(name="mcp__overseer__invoke_agent", arguments={"prompt": TASK})]
    )


async def test_claude_code_calls_invoke_agent_through_overseer_mcp_and_gets_the_agents_answer(tmp_path):
    with ScriptedModelServer(both_models) as model:
        overseer = embedded_env(tmp_path, model)
        config = client_config(
            "claude-code",
            data_dir=tmp_path / "data",
            env={
                k: overseer[k]
                for k in (
                    "OVERSEER_WORKSPACE", "OVERSEER_MODEL", "OVERSEER_API_BASE", "OVERSEER_API_KEY", "OVERSEER_MCP_SERVERS"
                )
            },
        )
        (tmp_path / "mcp.json").write_text(json.dumps(config))
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        proc = await asyncio.create_subprocess_exec(
            str(CLI), "-p", "Ask Overseer what 6 times 7 is.",
            "--mcp-config", str(tmp_path / "mcp.json"), "--strict-mcp-config",
            "--allowedTools", "mcp__overseer__invoke_agent", "--tools", "", "--setting-sources", "",
            "--model", "claude-scripted", "--output-format", "json",
            cwd=tmp_path, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        with anyio.fail_after(BOUND * 2):
            out, err = await proc.communicate()
        apis = [r.api for r in model.requests]
    assert proc.returncode == 0, err.decode()[-2000:]
    final = json.loads(out)
    assert final["is_error"] is False
    assert final["result"].startswith("Overseer answered: ")
    assert "The Overseer agent says 42." in final["result"]
    assert apis == ["anthropic", "openai", "anthropic"]
