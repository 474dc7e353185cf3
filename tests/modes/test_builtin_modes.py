"""The shipped modes: all parse, and each offers the tools its description promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.tools import ToolAnnotations, ToolInfo
from backend.modes.registry import BUILTIN_ORDER, ModeRegistry
from backend.paths import BUILTIN_MODES_DIR
from backend.rules.policy_engine import PolicyEngine, ToolCallView
from backend.rules.grammar import RuleSet

READS = ToolAnnotations(readOnlyHint=True, destructiveHint=False)
ACTS = ToolAnnotations(readOnlyHint=False, destructiveHint=False)
DESTROYS = ToolAnnotations(readOnlyHint=False, destructiveHint=True)

# The built-in servers' tools with the annotations they declare.
CATALOG = [
    ToolInfo(name=f"mcp__{server}__{tool}", server=server, tool=tool, annotations=annotations)
    for server, tool, annotations in [
        ("file", "read_file", READS),
        ("file", "list_dir", READS),
        ("file", "glob", READS),
        ("file", "grep", READS),
        ("file", "write_file", DESTROYS),
        ("file", "edit_file", DESTROYS),
        ("shell", "exec", DESTROYS),
        ("browser", "navigate", ACTS),
        ("browser", "snapshot", READS),
        ("browser", "evaluate", DESTROYS),
        ("memory", "memory_read", READS),
        ("memory", "memory_search", READS),
        ("memory", "memory_save", ACTS),
        ("memory", "memory_forget", DESTROYS),
        ("cron", "cron_create", ACTS),
    ]
]
READERS = [
    "mcp__file__read_file",
    "mcp__file__list_dir",
    "mcp__file__glob",
    "mcp__file__grep",
    "mcp__browser__snapshot",
    "mcp__memory__memory_read",
    "mcp__memory__memory_search",
]


@pytest.fixture
def registry(tmp_path):
    return ModeRegistry(BUILTIN_MODES_DIR, tmp_path / "modes")


def offered(registry: ModeRegistry, name: str) -> list[str]:
    return [tool.name for tool in registry.get(name).offered_tools(CATALOG)]


def test_all_five_built_in_modes_parse_with_a_description_an_icon_and_a_prompt(registry):
    modes = registry.list()
    assert [mode.name for mode in modes] == list(BUILTIN_ORDER)
    for mode in modes:
        assert mode.source == "builtin" and not mode.overrides_builtin
        assert mode.description and mode.icon and len(mode.prompt) > 200, mode.name


def test_the_agent_mode_offers_every_tool(registry):
    assert offered(registry, "agent") == [tool.name for tool in CATALOG]
    description = registry.get("agent").description
    assert description == "Does the work: every tool, each call through your permissions"


@pytest.mark.parametrize("name", ["ask", "plan"])
def test_ask_and_plan_offer_the_readers_and_nothing_that_changes_anything(registry, name):
    assert offered(registry, name) == READERS


def test_plan_hands_over_to_agent_and_asks_for_a_numbered_plan_under_a_plan_heading(registry):
    plan = registry.get("plan")
    assert plan.next_mode == "agent"
    assert "## Plan" in plan.prompt and "numbered" in plan.prompt


@pytest.mark.parametrize("tool", ["mcp__file__write_file", "mcp__file__edit_file", "mcp__shell__exec"])
def test_plan_policies_deny_writes_and_the_shell_even_where_an_allow_rule_exists(registry, tool):
    plan = registry.get("plan")
    rules = RuleSet.from_config({"allow": [tool]}, source="user")
    call = ToolCallView(name=tool, arguments={"path": "a.txt", "command": "ls"}, workspace=Path("/w"))
    for engine in (PolicyEngine(rules), PolicyEngine(RuleSet())):
        assert engine.evaluate(call, mode="plan", mode_policies=plan.policies).verdict == "deny"


def test_research_offers_the_browser_memory_readers_and_file_writing_but_not_the_shell(registry):
    assert offered(registry, "research") == [
        "mcp__file__read_file",
        "mcp__file__list_dir",
        "mcp__file__glob",
        "mcp__file__grep",
        "mcp__file__write_file",
        "mcp__browser__navigate",
        "mcp__browser__snapshot",
        "mcp__browser__evaluate",
        "mcp__memory__memory_read",
        "mcp__memory__memory_search",
        "mcp__memory__memory_save",
        "mcp__memory__memory_forget",
    ]
    assert "reports/" in registry.get("research").prompt


def test_review_offers_the_readers_and_writing_its_review_file(registry):
    assert offered(registry, "review") == [*READERS[:4], "mcp__file__write_file", *READERS[4:]]
    assert "REVIEW.md" in registry.get("review").prompt
