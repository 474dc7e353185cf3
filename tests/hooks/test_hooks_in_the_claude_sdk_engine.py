"""A pasted `.claude/settings.json` with hooks, on the claude-sdk engine (issue 34, "Done when"):
the real Claude Code CLI talks to the scripted model, every call goes through our gate, and the
hooks run there: a Bash linter (exit 2), an updatedInput rewrite, a PostToolUse logger, a Stop hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.config import load_settings
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host
from tests.hooks.hook_scripts import LINTER, LOGGER, REWRITER, STOP_ONCE, command, hooks_block, install

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXEC = "mcp__shell__exec"


def pasted_settings(ws: Path) -> dict:
    """A project's .claude/settings.json, hooks and permissions, as Claude Code reads it."""
    settings = {
        "permissions": {"allow": ["Bash(rm *)"]},
        "hooks": hooks_block(
            PreToolUse=[("Bash", [command(install(ws, "lint", LINTER)), command(install(ws, "rewrite", REWRITER))])],
            PostToolUse=[("Bash|Edit|Write", [command(install(ws, "log", LOGGER))])],
            Stop=[("", [command(install(ws, "stop", STOP_ONCE))])],
        ),
    }
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return settings


async def test_a_pasted_settings_json_with_hooks_behaves_as_claude_code_documents_on_the_sdk_engine(
    tmp_path: Path, pool: McpPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious")
    pasted_settings(ws)
    # The file as it is, read as the host's config: its hooks and permissions both load.
    monkeypatch.setenv("OVERSEER_CONFIG", str(ws / ".claude" / "settings.json"))
    loaded = load_settings(data_dir=tmp_path / "data")
    assert [g.matcher for g in loaded.hooks.groups("PreToolUse")] == ["Bash"]
    monkeypatch.delenv("OVERSEER_CONFIG")

    script = [
        Reply(text="Cleaning.", tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "rm keep.txt"})]),
        Reply(tool_calls=[ScriptedToolCall(name=EXEC, arguments={"command": "echo hello"})]),
        Reply(text="Finished."),
        Reply(text="Still finished."),
    ]
    async with scripted_host(
        tmp_path, script, pool=pool, default_engine="claude-sdk",
        hooks=loaded.hooks.model_dump(), permissions=loaded.permissions.model_dump(),
    ) as h:
        session = await h.run("tidy up", timeout=120)
        assert session.status == "completed", session.error
        assert session.engine == "claude-sdk"
        assert (ws / "keep.txt").read_text() == "precious"  # the linter's exit 2 beat the allow rule
        first, second = await h.host.store.list_tool_calls(session.id)
        assert first.status == "denied" and "move files to ./trash instead" in (first.result or "")
        assert second.status == "done" and second.arguments == {"command": "echo rewritten"}
        assert "rewritten" in (second.result or "") and "logged by the hook" in (second.result or "")
        logged = [json.loads(line) for line in (ws / "tool-log.jsonl").read_text().splitlines()]
        assert [entry["input"] for entry in logged] == [{"command": "echo rewritten"}]
        messages = await h.host.store.list_messages(session.id)
        assert any(m.role == "user" and m.content.startswith("Stop hook feedback:") for m in messages)
        seen = [json.loads(line)["active"] for line in (ws / "stop-hook-seen.jsonl").read_text().splitlines()]
        assert seen == [False, True]
        h.model.assert_all_used()
