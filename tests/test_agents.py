"""Named agents' configuration (backend/agents.py): main as before without `agents`, defaults,
and a clear ConfigError for every entry that cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.agents import Agents, UnknownAgent
from backend.config import ConfigError, Settings
from backend.rules.grammar import RuleSet

SERVERS = ["file", "shell", "tracker"]
MODES = ["agent", "plan", "review"]


def settings(tmp_path: Path, **values) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return Settings(data_dir=tmp_path / "data", workspace=workspace, **values)


def agents(tmp_path: Path, **values) -> Agents:
    return Agents.from_settings(settings(tmp_path, **values), servers=SERVERS, modes=MODES)


def test_without_agents_there_is_one_main_agent_exactly_as_before(tmp_path):
    found = agents(tmp_path)
    assert [a.id for a in found.list()] == ["main"]
    main = found.get(None)
    assert main.workspace == (tmp_path / "workspace").resolve()
    assert (main.model, main.mode, main.servers, main.rules) == (None, None, None, None)


def test_an_agent_gets_its_own_workspace_under_the_data_dir_and_main_keeps_the_configured_one(tmp_path):
    found = agents(tmp_path, agents=[{"id": "reviewer", "name": "Code reviewer"}])
    assert [a.id for a in found.list()] == ["main", "reviewer"]
    reviewer = found.get("reviewer")
    assert reviewer.workspace == (tmp_path / "data" / "agents" / "reviewer" / "workspace").resolve()
    assert reviewer.workspace.is_dir()
    assert reviewer.name == "Code reviewer"
    assert found.main.workspace == (tmp_path / "workspace").resolve()


def test_a_workspace_starting_with_a_tilde_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "src" / "app").mkdir(parents=True)
    found = agents(tmp_path, agents=[{"id": "reviewer", "workspace": "~/src/app"}])
    assert found.get("reviewer").workspace == (tmp_path / "src" / "app").resolve()


def test_an_agents_model_mode_servers_and_rules_are_kept(tmp_path):
    entry = {
        "id": "reviewer",
        "model": "openai/other",
        "mode": "review",
        "servers": ["file", "shell"],
        "permissions": {"deny": ["Bash(git push *)"]},
    }
    reviewer = agents(tmp_path, agents=[entry]).get("reviewer")
    assert (reviewer.model, reviewer.mode) == ("openai/other", "review")
    assert reviewer.servers == {"file", "shell"}
    assert reviewer.offers_server("file") and not reviewer.offers_server("tracker")
    assert isinstance(reviewer.rules, RuleSet) and [r.raw for r in reviewer.rules.deny] == ["Bash(git push *)"]


@pytest.mark.parametrize(
    ("entries", "words"),
    [
        ([{"id": "a"}, {"id": "a"}], "the id 'a' is used twice"),
        ([{"id": "a", "servers": ["nope"]}], "agents.a.servers: 'nope' is not a configured MCP server"),
        ([{"id": "a", "mode": "nope"}], "agents.a.mode: no mode 'nope'"),
        ([{"id": "a", "colour": "red"}], "agents[0].colour"),
        ([{"id": "Not An Id"}], "agents[0].id"),
        ([{"id": "a", "permissions": {"deny": ["Bash(unclosed"]}}], "agents.a.permissions"),
        ([{"id": "a", "workspace": "/no/such/folder"}], "agents.a.workspace: /no/such/folder is not a folder"),
    ],
)
def test_an_unusable_agent_is_a_config_error_that_says_where_and_why(tmp_path, entries, words):
    with pytest.raises(ConfigError, match=None) as caught:
        agents(tmp_path, agents=entries)
    assert words in str(caught.value)


def test_a_route_to_no_agent_or_a_malformed_route_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"routes\[0\]: no agent 'ghost'"):
        agents(tmp_path, routes=[{"channel": "cron", "agent": "ghost"}])
    with pytest.raises(ConfigError, match=r"routes\[0\]\.channel"):
        agents(tmp_path, routes=[{"channel": "email", "agent": "main"}])


def test_an_unknown_agent_is_not_found_and_the_error_names_the_agents_there_are(tmp_path):
    found = agents(tmp_path, agents=[{"id": "reviewer"}])
    with pytest.raises(UnknownAgent, match="no agent 'ghost' is configured \\(agents: main, reviewer\\)"):
        found.get("ghost")
