"""What the claude-sdk engine hands the CLI, checked without starting one: options, environment,
the proxy servers, the prompt, and how a session picks its engine."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from pydantic import ValidationError

from backend.domain.session_options import SessionOptions
from backend.api.schemas import CreateSession
from backend.cli import _parser
from backend.config import Settings
from backend.domain.models import Attachment, Message, Session, ToolCallRequest
from backend.domain.tools import ToolAnnotations, ToolInfo, ToolResult
from backend.engine.claude_sdk.options import (
    OFFLINE_API_KEY,
    SdkTarget,
    build_options,
    disallowed_tools,
    sdk_base_url,
    sdk_env,
    sdk_model,
)
from backend.engine.claude_sdk.proxy import TOOL_USE_ID_META, proxy_servers
from backend.engine.claude_sdk.transcript import earlier_context, prompt_blocks, unsent_user_messages
from backend.app.host import Host
from backend.domain.media import MediaFile
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
from backend.rules.grammar import RuleSet

READ = ToolInfo(name="mcp__file__read_file", server="file", tool="read_file", annotations=ToolAnnotations(readOnlyHint=True))
WRITE = ToolInfo(name="mcp__file__write_file", server="file", tool="write_file")
EXEC = ToolInfo(name="mcp__shell__exec", server="shell", tool="exec")
LOCAL = SdkTarget(model="scripted", base_url="http://127.0.0.1:9")


def test_a_litellm_anthropic_model_and_api_base_map_to_the_cli_s_model_and_base_url() -> None:
    assert sdk_model("anthropic/claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert sdk_model("claude-opus-4") == "claude-opus-4"
    assert sdk_base_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080"
    assert sdk_base_url("https://proxy.example/anthropic") == "https://proxy.example/anthropic"
    assert sdk_base_url(None) is None


def test_the_host_points_a_session_s_cli_at_the_configured_model_base_and_key(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, workspace=tmp_path, model="anthropic/claude-x", api_base="http://127.0.0.1:7/v1", api_key="k"
    )
    target = Host(settings).models.sdk_target_for(Session(id="s", workspace=str(tmp_path), model="anthropic/claude-y"))
    limit = settings.model_request_timeout
    assert target == SdkTarget(model="claude-y", base_url="http://127.0.0.1:7", api_key="k", request_timeout=limit)


def test_the_model_request_limit_reaches_the_cli_as_its_api_timeout(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, workspace=tmp_path, model="anthropic/claude-x", model_request_timeout=45.0)
    target = Host(settings).models.sdk_target_for(Session(id="s", workspace=str(tmp_path)))
    assert sdk_env(target, data_dir=tmp_path, setting_sources=[])["API_TIMEOUT_MS"] == "45000"
    assert "API_TIMEOUT_MS" not in sdk_env(LOCAL, data_dir=tmp_path, setting_sources=[])


def test_the_cli_runs_offline_with_its_config_and_home_under_the_data_dir(tmp_path: Path) -> None:
    env = sdk_env(LOCAL, data_dir=tmp_path, setting_sources=[])
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "claude-sdk" / "config")
    assert env["HOME"] == str(tmp_path / "claude-sdk" / "home")
    assert Path(env["CLAUDE_CONFIG_DIR"]).is_dir() and Path(env["HOME"]).is_dir()
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["ANTHROPIC_API_KEY"] == OFFLINE_API_KEY


def test_asking_for_the_person_s_user_settings_leaves_their_home_and_config_dir_alone(tmp_path: Path) -> None:
    env = sdk_env(SdkTarget(model="m", api_key="theirs"), data_dir=tmp_path, setting_sources=["user"])
    assert "CLAUDE_CONFIG_DIR" not in env and "HOME" not in env and "ANTHROPIC_BASE_URL" not in env
    assert env["ANTHROPIC_API_KEY"] == "theirs"


def test_the_options_turn_builtin_tools_off_and_leave_every_decision_to_can_use_tool(tmp_path: Path) -> None:
    options = build_options(
        target=LOCAL,
        system_prompt="You are a test.",
        workspace=tmp_path,
        mcp_servers={},
        disallowed=["mcp__shell__exec"],
        max_turns=7,
        data_dir=tmp_path,
        setting_sources=[],
        resume="abc",
        fork=True,
    )
    assert options.tools == [] and options.allowed_tools == [] and options.setting_sources == []
    assert options.strict_mcp_config and options.include_partial_messages
    assert options.disallowed_tools == ["mcp__shell__exec"] and options.max_turns == 7
    assert (options.resume, options.fork_session, options.model) == ("abc", True, "scripted")
    assert options.system_prompt == "You are a test." and options.cwd == str(tmp_path)


def test_only_a_whole_tool_deny_rule_hides_a_tool_from_the_model() -> None:
    rules = RuleSet.from_config({"deny": ["mcp__shell", "Edit(secret.txt)"]}, source="user")
    policy = PolicyEngine(rules, DEFAULT_POLICIES)
    assert disallowed_tools(policy, [READ, WRITE, EXEC]) == ["mcp__shell__exec"]


async def test_the_proxy_lists_only_the_given_tools_and_passes_the_cli_s_tool_use_id_along() -> None:
    calls: list[tuple[str, str | None, dict]] = []

    async def on_call(name: str, tool_use_id: str | None, arguments: dict) -> ToolResult:
        calls.append((name, tool_use_id, arguments))
        return ToolResult(text="read it")

    servers = proxy_servers([READ, EXEC], on_call)
    assert set(servers) == {"file", "shell"}
    async with Client(servers["file"]["instance"]) as client:
        with anyio.fail_after(10):
            listed = await client.list_tools()
            result = await client.call_tool("read_file", {"path": "a"}, meta={TOOL_USE_ID_META: "toolu_1"})
            unknown = await client.call_tool("write_file", {"path": "a"})
    assert [t.name for t in listed.tools] == ["read_file"]
    assert listed.tools[0].annotations.read_only_hint is True
    assert (result.content[0].text, result.is_error) == ("read it", False)
    assert unknown.is_error
    assert calls == [("mcp__file__read_file", "toolu_1", {"path": "a"})]


def test_a_run_sends_the_person_s_messages_since_the_last_answer_with_images_as_image_blocks() -> None:
    image = Attachment(kind="image", name="p.png", data="iVBORw0K", mime_type="image/png")
    history = [
        Message(session_id="s", idx=0, role="user", content="first"),
        Message(session_id="s", idx=1, role="assistant", content="one", tool_calls=[ToolCallRequest(id="c", name="t")]),
        Message(session_id="s", idx=2, role="tool", content="done", tool_call_id="c", name="t"),
        Message(session_id="s", idx=3, role="assistant", content="answer"),
        Message(session_id="s", idx=4, role="user", content="look", attachments=[image]),
        Message(session_id="s", idx=5, role="user", content="and this"),
    ]
    unsent = unsent_user_messages(history)
    assert [m.idx for m in unsent] == [4, 5]
    assert prompt_blocks(unsent, preamble="context") == [
        {"type": "text", "text": "context"},
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
        {"type": "text", "text": "and this"},
    ]
    context = earlier_context(history, memory_from=1, before=4)
    assert "first" not in context  # cleared by /new
    assert "assistant: one" in context and "[result of t] done" in context and "assistant: answer" in context


def test_earlier_context_names_a_results_images_without_repeating_them() -> None:
    shot = MediaFile(kind="image", name="a" * 64 + ".png", mime_type="image/png", size=10)
    history = [
        Message(session_id="s", idx=0, role="tool", name="mcp__browser__screenshot", content="the page", media=[shot, shot]),
    ]
    assert "[result of mcp__browser__screenshot] the page [2 images, not repeated here]" in earlier_context(
        history, memory_from=0, before=1
    )


def test_a_session_takes_its_engine_from_the_request_the_cli_or_the_configured_default() -> None:
    assert CreateSession(engine="claude-sdk").engine == "claude-sdk"
    assert CreateSession().engine is None
    with pytest.raises(ValidationError):
        CreateSession(engine="other")
    assert _parser().parse_args(["run", "--engine", "claude-sdk", "go"]).engine == "claude-sdk"
    assert _parser().parse_args(["run", "go"]).engine is None
    assert Settings(default_engine="claude-sdk").default_engine == "claude-sdk"
    assert Settings().default_engine == "litellm"


async def test_a_new_session_gets_the_host_s_default_engine_unless_it_names_one(tmp_path: Path) -> None:
    host = Host(Settings(data_dir=tmp_path / "data", workspace=tmp_path / "work", default_engine="claude-sdk", builtin_servers=False))
    (tmp_path / "work").mkdir()
    await host.store.open()
    try:
        assert (await host.runner.create(options=SessionOptions(title="a"))).engine == "claude-sdk"
        other = await host.runner.create(options=SessionOptions(title="b", engine="litellm"))
        assert other.engine == "litellm"
    finally:
        await host.store.close()
