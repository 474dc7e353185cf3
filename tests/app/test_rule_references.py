"""At the start, a rule naming a server or tool that does not exist is a warning in the log, and a
deny rule that covers nothing stops the host unless listed in `deny_unmatched_ok` (issue 35, item 12)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from backend.app.host import Host
from backend.config import ConfigError, PermissionsConfig
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings
from backend.testing.in_process import in_process_transport

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The reference memory server, pasted from Claude Code and renamed: `memory` is a built-in's name.
ECHO_SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "echo_server.py"
RENAMED = {"memory-server": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}
STALE_DENY = "mcp__memory__delete_entities"


def settings_for(tmp_path, **overrides):
    with ScriptedModelServer() as model:
        return scripted_settings(tmp_path, model, mcp_servers=RENAMED, **overrides)


async def test_a_deny_rule_left_naming_the_old_server_stops_the_start_naming_the_renamed_one(tmp_path, pool):
    settings = settings_for(tmp_path, permissions=PermissionsConfig(deny=[STALE_DENY]), builtin_servers=False)
    with pytest.raises(ConfigError) as info:
        Host(settings, pool=pool)
    assert STALE_DENY in str(info.value)
    assert "mcp__memory-server__delete_entities" in str(info.value) and "deny_unmatched_ok" in str(info.value)


async def test_a_deny_rule_marked_as_intended_starts_with_a_warning(tmp_path, pool, caplog):
    settings = settings_for(
        tmp_path,
        permissions=PermissionsConfig(deny=[STALE_DENY]),
        deny_unmatched_ok=[STALE_DENY],
        builtin_servers=False,
    )
    with caplog.at_level(logging.WARNING, logger="backend.app.rule_references"):
        host = Host(settings, pool=pool)
    assert [f.level for f in host.rule_references.findings()] == ["warning"]
    assert f"deny rule {STALE_DENY!r} (user) covers nothing" in caplog.text


async def test_allow_and_ask_rules_naming_no_server_start_with_a_warning_each(tmp_path, pool, caplog):
    permissions = PermissionsConfig(allow=["mcp__github__list_issues"], ask=["mcp__notes__*"])
    with caplog.at_level(logging.WARNING, logger="backend.app.rule_references"):
        Host(settings_for(tmp_path, permissions=permissions), pool=pool)
    assert "allow rule 'mcp__github__list_issues'" in caplog.text and "ask rule 'mcp__notes__*'" in caplog.text


async def test_a_named_agents_deny_rule_is_checked_too(tmp_path, pool):
    agents = [{"id": "notes", "permissions": {"deny": ["mcp__memroy-server__delete_entities"]}}]
    with pytest.raises(ConfigError, match="agent:notes"):
        Host(settings_for(tmp_path, agents=agents), pool=pool)


async def test_rules_for_configured_servers_start_quietly_before_the_servers_list_their_tools(tmp_path, pool, caplog):
    permissions = PermissionsConfig(deny=["mcp__memory-server__delete_entities", "Bash(rm *)"])
    with caplog.at_level(logging.WARNING, logger="backend.app.rule_references"):
        host = Host(settings_for(tmp_path, permissions=permissions), pool=pool)
    assert host.rule_references.findings() == [] and "covers nothing" not in caplog.text


async def test_a_deny_rule_for_a_built_in_servers_missing_tool_stops_the_start_once_the_server_lists(tmp_path):
    # The case: `memory` is now the built-in memory server, which has no delete_entities.
    settings = settings_for(tmp_path, permissions=PermissionsConfig(deny=[STALE_DENY]))
    host = Host(settings, transport_factory=in_process_transport)  # its own pool, built-ins in memory
    with pytest.raises(ConfigError) as info:
        await host.start()
    assert "server 'memory' has no tool 'delete_entities'" in str(info.value)
    assert "'memory-server' (mcp__memory-server__delete_entities)" in str(info.value)
    assert host.closing  # closed again: nothing left running


async def test_a_deny_rule_for_a_tool_a_started_server_lacks_is_logged_as_an_error_once_it_has_listed(tmp_path, caplog):
    # A server not listed at the start is checked by name alone; its tool list settles it later.
    echo = {"echoes": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    with ScriptedModelServer() as model:
        settings = scripted_settings(
            tmp_path, model, mcp_servers=echo, builtin_servers=False, permissions=PermissionsConfig(deny=["mcp__echoes__delete_all"])
        )
    host = Host(settings)
    try:
        with caplog.at_level(logging.ERROR, logger="backend.app.server_watch"):
            await host.start(recover=False)
            await asyncio.wait_for(host._watching_servers, timeout=60)  # the start's own report, after listing
        [finding] = host.rule_references.findings()
        assert finding.level == "error" and "server 'echoes' has no tool 'delete_all'" in finding.message
        assert "deny rule 'mcp__echoes__delete_all' (user) covers nothing" in caplog.text
    finally:
        await host.aclose()
