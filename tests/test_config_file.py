"""The config file's one writer (backend/config_file.py, issue 33 item 13): an agent saved on the
Agents page, an "always allow" answer and a server change each rewrite only what they change;
comments, order, quoting and the spelling of numbers stay byte for byte."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from backend.agents import AgentConfig, Agents
from backend.app.agents_admin import AgentAdmin
from backend.app.policy import PolicyService
from backend.app.servers_file import write_server_entry
from backend.config import load_settings

CONFIG = """\
# The admin's config: every word of it stays.
model: openai/gpt-4o   # the house model
budget:
  per_session_usd: 0.50  # fifty cents, spelled so
  warn_at: 0.80
permissions:
  # what runs without asking
  allow:
    - "Bash(ls *)"   # listing is fine
  deny: ['Bash(rm *)']
agents:
  - id: helper
    name: 'The helper'   # quoted on purpose
    mode: agent
# the end
"""


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """The admin's overseer.yaml in the data dir, mode 0640 (a write keeps the mode)."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "overseer.yaml"
    path.write_text(CONFIG.replace("model: openai", f"workspace: {tmp_path / 'work'}\nmodel: openai"))
    path.chmod(0o640)
    return path


def test_saving_an_agent_rewrites_only_that_agent_and_keeps_comments_numbers_and_quotes(config):
    before = config.read_text()
    settings = load_settings()
    admin = AgentAdmin(
        settings=settings,
        agents=Agents.from_settings(settings, servers=[], modes=["agent", "plan"]),
        servers=lambda: [],
        modes=lambda: ["agent", "plan"],
    )
    admin.update("helper", AgentConfig(id="helper", name="The helper", mode="plan"))
    assert config.read_text() == before.replace("    mode: agent\n", "    mode: plan\n")
    assert stat.S_IMODE(config.stat().st_mode) == 0o640


def test_an_always_allow_answer_adds_its_rule_and_changes_nothing_else(config):
    before = config.read_text()
    PolicyService(load_settings()).add_always_allow(["Bash(pwd)"])
    assert config.read_text() == before.replace(
        '    - "Bash(ls *)"   # listing is fine\n', '    - "Bash(ls *)"   # listing is fine\n    - Bash(pwd)\n'
    )


def test_a_server_added_to_a_flow_style_section_keeps_the_rest_of_the_file_as_written(config):
    config.write_text(config.read_text() + "mcpServers: {git: {command: git-mcp}} # one line\n")
    before = config.read_text()
    write_server_entry(config, "files", {"command": "fs-mcp"})
    assert config.read_text() == before.replace("{command: git-mcp}}", "{command: git-mcp}, files: {command: fs-mcp}}")
