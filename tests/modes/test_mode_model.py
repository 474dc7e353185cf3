"""Mode: which tools it offers (all, names, servers, globs, read-only), and what it refuses as written."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.domain.tools import ToolAnnotations, ToolInfo
from backend.frontmatter import parse_front_matter
from backend.modes.model import (
    READ_ONLY,
    InvalidMode,
    Mode,
    ModeWrite,
    UnknownMode,
    build_mode,
    parse_mode_file,
    render_mode_file,
)
from backend.store.base import NotFound


def tool(name: str, **hints: bool) -> ToolInfo:
    server, _, short = name.removeprefix("mcp__").partition("__")
    return ToolInfo(name=name, server=server, tool=short, annotations=ToolAnnotations(**hints))


CATALOG = [
    tool("mcp__file__read_file"),  # a file reader, read-only without any annotation
    tool("mcp__file__write_file", readOnlyHint=True),  # a hint never makes a file write read-only
    tool("mcp__shell__exec"),
    tool("mcp__browser__snapshot", readOnlyHint=True, destructiveHint=False),
    tool("mcp__browser__navigate", readOnlyHint=False),
    tool("mcp__browser-extra__open"),
    tool("mcp__memory__memory_search", readOnlyHint=True),
    tool("mcp__memory__memory_forget", readOnlyHint=True, destructiveHint=True),
    tool("mcp__github__list_issues"),  # no annotations at all: not read-only
]


def offered(mode: Mode) -> list[str]:
    return [t.name for t in mode.offered_tools(CATALOG)]


def test_all_offers_every_tool_in_the_order_given():
    mode = Mode(name="m", tools="all")
    assert offered(mode) == [t.name for t in CATALOG]
    assert offered(Mode(name="m")) == [t.name for t in CATALOG]


def test_an_exact_tool_name_offers_that_tool_alone():
    assert offered(Mode(name="m", tools=["mcp__shell__exec"])) == ["mcp__shell__exec"]


def test_a_server_pattern_offers_its_tools_but_not_a_server_with_a_longer_name():
    expected = ["mcp__browser__snapshot", "mcp__browser__navigate"]
    assert offered(Mode(name="m", tools=["mcp__browser"])) == expected


def test_a_glob_offers_the_tools_it_matches():
    mode = Mode(name="m", tools=["mcp__memory__memory_*", "mcp__browser*__open"])
    expected = ["mcp__browser-extra__open", "mcp__memory__memory_search", "mcp__memory__memory_forget"]
    assert offered(mode) == expected


def test_read_only_offers_file_readers_and_annotated_readers_but_nothing_destructive_or_unannotated():
    assert offered(Mode(name="m", tools=[READ_ONLY])) == [
        "mcp__file__read_file",
        "mcp__browser__snapshot",
        "mcp__memory__memory_search",
    ]


def test_patterns_combine_and_the_catalog_order_is_kept():
    mode = Mode(name="m", tools=["mcp__shell__exec", READ_ONLY])
    assert offered(mode) == [
        "mcp__file__read_file",
        "mcp__shell__exec",
        "mcp__browser__snapshot",
        "mcp__memory__memory_search",
    ]


def test_a_single_pattern_is_read_as_a_list_of_one():
    mode = Mode(name="m", tools="mcp__shell")
    assert mode.tools == ["mcp__shell"]
    assert offered(mode) == ["mcp__shell__exec"]


def test_an_empty_tool_list_offers_nothing():
    assert offered(Mode(name="m", tools=[])) == []


@pytest.mark.parametrize("tools", [["nope"], ["mcp__"], ["mcp__file__"], [READ_ONLY, "all"], [3], None])
def test_a_tool_pattern_that_cannot_be_read_is_refused_naming_the_tools_field(tools):
    with pytest.raises(InvalidMode) as caught:
        build_mode("m", {"tools": tools}, source="user", overrides_builtin=False)
    assert str(caught.value).startswith("tools")


@pytest.mark.parametrize(
    "policies",
    [
        {"mcp__shell__exec": "maybe"},
        {"shell": "deny"},
        {"mcp__file__(x)": "ask"},
        {"mcp__shell__exec": False},
    ],
)
def test_a_policy_with_a_bad_key_or_value_is_refused_naming_the_policies_field(policies):
    with pytest.raises(InvalidMode) as caught:
        build_mode("m", {"policies": policies}, source="user", overrides_builtin=False)
    assert str(caught.value).startswith("policies")


def test_policies_for_tools_servers_and_globs_are_kept():
    policies = {"mcp__file__write_file": "deny", "mcp__browser": "ask", "mcp__memory__*": "always_allow"}
    assert Mode(name="m", policies=policies).policies == policies


@pytest.mark.parametrize("name", ["Plan", "-plan", "my mode", "", "a" * 65, "../etc", "plan.md", "é"])
def test_a_mode_name_must_be_a_lowercase_slug(name):
    with pytest.raises(InvalidMode):
        build_mode(name, {}, source="user", overrides_builtin=False)


@pytest.mark.parametrize("name", ["a", "9", "my-mode_2", "a" * 64])
def test_lowercase_slugs_are_valid_mode_names(name):
    assert Mode(name=name).name == name


def test_next_mode_must_be_a_slug_other_than_the_mode_itself():
    assert Mode(name="plan", next_mode="agent").next_mode == "agent"
    for next_mode in ("Agent", "plan"):
        with pytest.raises(InvalidMode) as caught:
            build_mode("plan", {"next_mode": next_mode}, source="user", overrides_builtin=False)
        assert str(caught.value).startswith("next_mode")


def test_a_mode_round_trips_through_its_file_text(tmp_path):
    mode = Mode(
        name="triage",
        description="Sorts issues",
        tools=["mcp__github", READ_ONLY],
        policies={"mcp__github__close_issue": "deny"},
        default_folder="~/work",
        next_mode="agent",
        icon="🧭",
        prompt="Sort the issues.\n\n- by severity\n",
        source="user",
    )
    path = tmp_path / "triage.md"
    path.write_text(render_mode_file(mode), encoding="utf-8")
    assert parse_mode_file(path, source="user") == mode
    meta, _ = parse_front_matter(path.read_text(encoding="utf-8"), source="triage.md")
    assert meta["name"] == "triage" and "source" not in meta and "prompt" not in meta


def test_a_front_matter_name_that_differs_from_the_file_name_is_refused(tmp_path):
    path = tmp_path / "triage.md"
    path.write_text("---\nname: sorting\n---\nSort.\n", encoding="utf-8")
    with pytest.raises(InvalidMode) as caught:
        parse_mode_file(path, source="user")
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("key", ["polices", "source", "prompt", "overrides_builtin"])
def test_a_front_matter_key_a_mode_does_not_have_is_refused(tmp_path, key):
    path = tmp_path / "triage.md"
    path.write_text(f"---\n{key}: x\n---\nSort.\n", encoding="utf-8")
    with pytest.raises(InvalidMode):
        parse_mode_file(path, source="user")


def test_a_file_without_front_matter_is_a_mode_offering_every_tool(tmp_path):
    path = tmp_path / "plain.md"
    path.write_text("Just a prompt.\n", encoding="utf-8")
    mode = parse_mode_file(path, source="user")
    assert (mode.name, mode.tools, mode.prompt) == ("plain", "all", "Just a prompt.")


@pytest.mark.parametrize("extra", [{"name": "x"}, {"source": "builtin"}, {"overrides_builtin": True}])
def test_the_write_body_refuses_fields_a_person_does_not_set(extra):
    with pytest.raises(ValidationError):
        ModeWrite.model_validate({"prompt": "p", **extra})


def test_unknown_mode_is_a_not_found_listing_the_modes():
    error = UnknownMode("x", ["agent", "ask"])
    assert isinstance(error, NotFound) and error.name == "x"
    assert str(error) == "unknown mode 'x'; modes: agent, ask"
