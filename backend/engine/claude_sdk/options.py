"""ClaudeAgentOptions for one run: the prompt and tools of the turn, our policies, an offline-clean CLI.

The CLI's built-in tools are off (`tools=[]`) and it reads no MCP configuration but ours
(`strict_mcp_config`): every tool the agent has is a pooled server proxied in-process (see
`proxy.py`). Its permission prompts all come to `can_use_tool`, so every call gets the gate's
decision and audit row: nothing goes in `allowed_tools`, which the CLI would approve by itself.
Tools a whole-tool deny rule forbids go in `disallowed_tools`, so the model is not shown them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import ClaudeAgentOptions

from backend.domain.tools import ToolInfo
from backend.rules.policy_engine import PolicyEngine

SettingSource = Literal["user", "project", "local"]
OFFLINE_API_KEY = "overseer-offline"
"""Sent when the model server needs no key (the demo, the scripted model): the CLI wants one."""


@dataclass(kw_only=True, frozen=True)
class SdkTarget:
    """Where the CLI sends its model requests."""

    model: str
    base_url: str | None = None
    """`ANTHROPIC_BASE_URL`; None: Anthropic's own API."""
    api_key: str | None = None
    request_timeout: float | None = None
    """Seconds until a model response starts: the CLI's `API_TIMEOUT_MS` (its SDK's timeout runs
    until the response headers, not over the stream). None: the CLI's own default (600 s)."""
    thinking_budget: int | None = None
    """Extended thinking's token budget (`Settings.thinking`); None: thinking off."""


def sdk_thinking(target: SdkTarget) -> dict[str, Any]:
    """The CLI's thinking option: the budget asked for, else off, said outright so the CLI's
    own default (which may think) does not decide it. The CLI turns a budget into adaptive
    thinking on models that have it; "summarized" asks for the reasoning's text, which newer
    models otherwise omit (the person is shown it)."""
    if target.thinking_budget is None:
        return {"type": "disabled"}
    return {"type": "enabled", "budget_tokens": target.thinking_budget, "display": "summarized"}


def sdk_model(model: str) -> str:
    """LiteLLM's `anthropic/claude-x` is the CLI's `claude-x`; other names pass through."""
    return model.removeprefix("anthropic/")


def sdk_base_url(api_base: str | None) -> str | None:
    """An `api_base` as the CLI's base URL: it appends `/v1/messages` itself."""
    if not api_base:
        return None
    return api_base.rstrip("/").removesuffix("/v1")


def sdk_env(target: SdkTarget, *, data_dir: Path, setting_sources: Sequence[SettingSource]) -> dict[str, str]:
    """The CLI's environment over ours: no nonessential traffic, and its state under our data dir.

    With the person's "user" settings asked for, HOME and CLAUDE_CONFIG_DIR stay theirs.
    """
    env = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    if "user" not in setting_sources:
        root = data_dir / "claude-sdk"
        for folder in (root / "config", root / "home"):
            folder.mkdir(parents=True, exist_ok=True)
        env.update(CLAUDE_CONFIG_DIR=str(root / "config"), HOME=str(root / "home"))
    if target.base_url:
        env["ANTHROPIC_BASE_URL"] = target.base_url
    key = target.api_key or os.environ.get("ANTHROPIC_API_KEY") or (OFFLINE_API_KEY if target.base_url else None)
    if key:
        env["ANTHROPIC_API_KEY"] = key
    if target.request_timeout is not None:
        env["API_TIMEOUT_MS"] = str(max(1, round(target.request_timeout * 1000)))
    return env


def disallowed_tools(policy: PolicyEngine, tools: Sequence[ToolInfo]) -> list[str]:
    """Tools a deny rule forbids whole (no specifier): no call to them could ever be allowed."""
    whole = [r for r in policy.rules.rules("deny") if r.kind == "tool" and not r.carve_out]
    return [t.name for t in tools if any(r.tools.selects(t.name) for r in whole)]


def build_options(
    *,
    target: SdkTarget,
    system_prompt: str,
    workspace: Path,
    mcp_servers: dict[str, Any],
    disallowed: list[str],
    max_turns: int,
    data_dir: Path,
    setting_sources: Sequence[SettingSource],
    resume: str | None = None,
    fork: bool = False,
    **callbacks: Any,
) -> ClaudeAgentOptions:
    """Options for one run; `callbacks` are `can_use_tool`, `hooks` and `stderr`."""
    return ClaudeAgentOptions(
        tools=[],
        allowed_tools=[],
        disallowed_tools=disallowed,
        mcp_servers=mcp_servers,
        strict_mcp_config=True,
        system_prompt=system_prompt,
        model=target.model,
        cwd=str(workspace),
        env=sdk_env(target, data_dir=data_dir, setting_sources=setting_sources),
        setting_sources=list(setting_sources),
        permission_mode="default",
        include_partial_messages=True,
        thinking=sdk_thinking(target),
        max_turns=max_turns,
        resume=resume,
        fork_session=fork and resume is not None,
        **callbacks,
    )
