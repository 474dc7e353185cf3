"""Tool selection (issue 19): past `tool_selection.max_tools` the model is shown core, relevant,
most-used and found tools plus `search_tools`; the gate still refuses every tool it was not shown."""

from __future__ import annotations

import pytest
from sample_tools import MANY, TOOLS, tool

from backend.config import Settings, ToolSelectionConfig
from backend.domain.models import Message, Session, ToolCallRecord
from backend.domain.session_options import SessionOptions
from backend.domain.tools import ToolInfo
from backend.engine.turns.tool_selection import SEARCH_TOOLS, ToolSelection, most_used, select_tools
from backend.engine.turns.turn import prepare_turn
from backend.modes.registry import ModeRegistry
from backend.paths import BUILTIN_MODES_DIR
from backend.skills.catalog import SkillCatalog
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

# The end-to-end test shares the module's file + shell pool (tests/conftest.py), on its loop.
on_module_loop = pytest.mark.asyncio(loop_scope="module")


def config(**changes: object) -> ToolSelectionConfig:
    values: dict[str, object] = {"max_tools": 10, "relevant": 3, "most_used": 2, "core_tools": ["mcp__file__*"]}
    return ToolSelectionConfig(**{**values, **changes})


def user(text: str) -> Message:
    return Message(session_id="s", role="user", content=text)


def ran(name: str, status: str = "done") -> ToolCallRecord:
    return ToolCallRecord(id=f"{name}-{status}", session_id="s", name=name, status=status)  # type: ignore[arg-type]


async def nowhere(names: list[str]) -> None:
    return None


def selection(**changes: object) -> ToolSelection:
    chosen = select_tools(MANY, config(**changes), found=[], remember=nowhere)
    assert chosen is not None
    return chosen


# what a turn shows


def test_up_to_max_tools_every_tool_is_shown_without_selection():
    assert select_tools(TOOLS, config(max_tools=len(TOOLS)), found=[], remember=nowhere) is None
    assert select_tools(TOOLS, config(max_tools=len(TOOLS) - 1), found=[], remember=nowhere) is not None


def test_selection_is_on_by_default_past_forty_tools():
    assert Settings().tool_selection.max_tools == 40


def test_a_turn_past_the_threshold_shows_core_relevant_most_used_and_found_tools_then_search_tools():
    chosen = selection()
    chosen.found.append("mcp__aws__upload_object")
    history = [user("post a message to the slack channel")]
    records = [ran("mcp__weather__get_forecast"), ran("mcp__weather__get_forecast"), ran("mcp__maps__directions")]
    shown = [t.name for t in chosen.offer(history, records)]
    assert shown[-1] == SEARCH_TOOLS
    assert {"mcp__file__read_file", "mcp__file__write_file"} <= set(shown)  # core
    assert "mcp__slack__post_message" in shown  # relevant
    assert {"mcp__weather__get_forecast", "mcp__maps__directions"} <= set(shown)  # most used
    assert "mcp__aws__upload_object" in shown  # found
    assert len(shown) <= 2 + 3 + 2 + 1 + 1
    assert not any(name.startswith("mcp__misc") for name in shown)


def test_shown_tools_keep_the_catalog_order_so_the_prompt_prefix_stays_stable():
    shown = selection().offer([user("slack message about the weather forecast")], [])
    positions = [MANY.index(t) for t in shown[:-1]]
    assert positions == sorted(positions)


def test_only_calls_that_ran_count_as_use_and_search_tools_never_does():
    records = [ran("a"), ran("b"), ran("b"), ran("c", "denied"), ran("c", "error"), ran("c", "error"), ran(SEARCH_TOOLS)]
    assert most_used(records, limit=5) == ["b", "a"]


def test_a_found_tool_the_mode_no_longer_offers_is_not_shown():
    chosen = selection()
    chosen.found.append("mcp__gone__tool")
    assert "mcp__gone__tool" not in [t.name for t in chosen.offer([user("hello")], [])]


# search_tools


@on_module_loop
async def test_search_tools_lists_what_it_finds_and_remembers_it_for_the_session():
    remembered: list[list[str]] = []

    async def remember(names: list[str]) -> None:
        remembered.append(names)

    chosen = select_tools(MANY, config(search_results=2), found=[], remember=remember)
    assert chosen is not None
    result = await chosen.search({"query": "send an email"})
    assert not result.is_error and "mcp__gmail__send_email" in result.text
    assert remembered[0][0] == "mcp__gmail__send_email" and len(remembered[0]) <= 2
    assert "mcp__gmail__send_email" in [t.name for t in chosen.offer([user("hi")], [])]
    await chosen.search({"query": "send an email"})
    assert len(remembered) == 1  # nothing new found: nothing written


@pytest.mark.parametrize("arguments", [{}, {"query": "  "}, {"query": 3}])
@on_module_loop
async def test_search_tools_without_a_query_is_an_error_result_the_model_can_fix(arguments):
    result = await selection().search(arguments)
    assert result.is_error


@on_module_loop
async def test_search_tools_that_finds_nothing_says_so_and_adds_nothing():
    chosen = selection()
    result = await chosen.search({"query": "zzyzx"})
    assert not result.is_error and "No tool matches" in result.text and chosen.found == []


# a turn


async def turn_for(tmp_path, session: Session, tools: list[ToolInfo]):
    modes = ModeRegistry(BUILTIN_MODES_DIR, tmp_path / "modes")
    skills = SkillCatalog(tmp_path / "none", tmp_path / "skills")
    return await prepare_turn(
        session,
        modes=modes,
        skills=skills,
        data_dir=tmp_path,
        all_tools=tools,
        tool_selection=config(),
        remember_found=nowhere,
    )


@on_module_loop
async def test_tools_a_session_found_before_a_restart_are_offered_by_its_next_turn(tmp_path):
    session = Session(id="s1", workspace=str(tmp_path), found_tools=["mcp__twilio__send_sms"])
    turn = await turn_for(tmp_path, session, [*MANY, tool("twilio", "send_sms", "Send an SMS.")])
    assert turn.selection is not None
    assert "mcp__twilio__send_sms" in [t.name for t in turn.selection.offer([user("hello")], [])]


@on_module_loop
async def test_claude_sdk_sessions_and_small_catalogs_get_every_tool_without_selection(tmp_path):
    sdk = Session(id="s1", workspace=str(tmp_path), engine="claude-sdk")
    assert (await turn_for(tmp_path, sdk, MANY)).selection is None
    small = Session(id="s2", workspace=str(tmp_path))
    assert (await turn_for(tmp_path, small, TOOLS[:10])).selection is None


# end to end


def call(name: str, arguments: dict) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments)


@on_module_loop
async def test_a_tool_found_by_search_tools_is_offered_from_the_next_call_and_an_unshown_one_is_refused(
    tmp_path, pool
):
    script = [
        Reply(tool_calls=[call("mcp__shell__exec", {"command": "echo too-early"})]),
        Reply(tool_calls=[call(SEARCH_TOOLS, {"query": "run a bash command"})]),
        Reply(tool_calls=[call("mcp__shell__exec", {"command": "echo found-it"})]),
        Reply(text="done"),
    ]
    selecting = {"max_tools": 1, "core_tools": [], "relevant": 0, "most_used": 0, "search_results": 1}
    allow_shell = {"mcp__shell__exec": "always_allow"}
    async with scripted_host(tmp_path, script, pool=pool, tool_selection=selecting, policies=allow_shell) as h:
        session = await h.run("hello")
        requests = h.model.requests
        records = {r.id: r for r in await h.host.store.list_tool_calls(session.id)}
        stored = await h.host.store.get_session(session.id)

    assert session.status == "completed"
    assert requests[0].tool_names == [SEARCH_TOOLS]
    refused = requests[1].tool_results()[0]
    assert records[refused.tool_call_id].status == "error" and "too-early" not in refused.text  # never ran
    assert "mcp__shell__exec" not in requests[1].tool_names
    assert "mcp__shell__exec" in requests[2].tool_names and SEARCH_TOOLS in requests[2].tool_names
    assert "found-it" in requests[3].last_tool_results()[0]
    assert sorted((r.name, r.status) for r in records.values()) == [
        ("mcp__shell__exec", "done"),
        ("mcp__shell__exec", "error"),
        (SEARCH_TOOLS, "done"),
    ]
    assert stored.found_tools == ["mcp__shell__exec"]


# a call to a tool the step did not show (issue 35, item 13)


def test_a_tool_the_mode_offers_but_the_step_did_not_show_is_refused_pointing_to_search_tools():
    chosen = selection()
    shown = [t.name for t in chosen.offer([user("weather in Paris")], []) if t.name != SEARCH_TOOLS]
    hidden = next(t.name for t in MANY if t.name not in shown)
    why = chosen.not_shown(hidden, shown)
    assert why is not None and SEARCH_TOOLS in why and hidden in why
    assert "does not offer" not in why
    assert chosen.not_shown(shown[0], shown) is None
    assert chosen.not_shown("mcp__nowhere__nothing", shown) is None  # not the mode's: the gate says so


@on_module_loop
async def test_a_listed_but_unshown_tool_names_search_tools_and_a_tool_the_mode_lacks_never_does(tmp_path, pool):
    script = [
        Reply(tool_calls=[call("mcp__shell__exec", {"command": "echo unshown"})]),
        Reply(text="agent done"),
        Reply(tool_calls=[call("mcp__shell__exec", {"command": "echo not-in-ask"})]),
        Reply(text="ask done"),
    ]
    selecting = {"max_tools": 1, "core_tools": [], "relevant": 0, "most_used": 0, "search_results": 1}
    async with scripted_host(tmp_path, script, pool=pool, tool_selection=selecting) as h:
        agent = await h.run("hello")
        asked = await h.run("hello", SessionOptions(mode="ask"))
        requests = h.model.requests
        records = await h.host.store.list_tool_calls(agent.id) + await h.host.store.list_tool_calls(asked.id)

    assert (agent.status, asked.status) == ("completed", "completed")
    in_agent, in_ask = requests[1].last_tool_results()[0], requests[3].last_tool_results()[0]
    assert SEARCH_TOOLS in in_agent and "exists" in in_agent and "does not offer" not in in_agent
    assert "The ask mode does not offer the tool 'mcp__shell__exec'" in in_ask and SEARCH_TOOLS not in in_ask
    assert [r.status for r in records] == ["error", "error"]  # neither ran
