"""Remote server entries (backend/mcp/config.py), read as Claude Code's .mcp.json writes them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.mcp.config import McpServerConfig, parse_mcp_servers


def test_http_and_sse_entries_from_a_claude_code_mcp_json_are_read_unchanged():
    servers = parse_mcp_servers(
        {
            "mcpServers": {
                "tracker": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "core"}},
                "old": {"type": "sse", "url": "https://old.example.com/sse"},
                "local": {"command": "npx", "args": ["server"]},
            }
        }
    )
    assert [(s.type, s.url, s.is_remote) for s in servers.values()] == [
        ("http", "https://mcp.example.com/mcp", True),
        ("sse", "https://old.example.com/sse", True),
        ("stdio", None, False),
    ]
    assert servers["tracker"].resolved_headers() == {"X-Team": "core"}


def test_header_variables_are_read_from_the_environment_when_connecting(monkeypatch):
    monkeypatch.setenv("TRACKER_TOKEN", "t0k")
    config = McpServerConfig(type="http", url="https://x.example/mcp", headers={"Authorization": "Bearer ${TRACKER_TOKEN}"})
    monkeypatch.setenv("TRACKER_TOKEN", "rotated")
    assert config.resolved_headers() == {"Authorization": "Bearer rotated"}
    assert config.headers == {"Authorization": "Bearer ${TRACKER_TOKEN}"}
    with_default = McpServerConfig(type="http", url="https://x.example/mcp", headers={"X-Env": "${NO_SUCH_VAR_1:-dev}"})
    assert with_default.resolved_headers() == {"X-Env": "dev"}


def test_a_header_naming_an_unset_variable_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_VAR_2", raising=False)
    with pytest.raises(ValidationError, match=r"headers\.Authorization: \$\{NO_SUCH_VAR_2\} is not set"):
        McpServerConfig.model_validate({"type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "${NO_SUCH_VAR_2}"}})


def test_a_url_without_a_type_is_refused_as_claude_code_refuses_it():
    with pytest.raises(ValidationError, match="needs `type: http`"):
        McpServerConfig.model_validate({"url": "https://x.example/mcp"})


def test_keys_of_the_other_transport_are_refused_by_name():
    with pytest.raises(ValidationError, match="'command' not allowed in a `type: http` server"):
        McpServerConfig.model_validate({"type": "http", "url": "https://x.example/mcp", "command": "x"})
    with pytest.raises(ValidationError, match="'headers' not allowed in a `type: stdio` server"):
        McpServerConfig.model_validate({"command": "x", "headers": {"A": "b"}})
    with pytest.raises(ValidationError, match="headerz"):
        McpServerConfig.model_validate({"type": "sse", "url": "https://x.example/sse", "headerz": {}})


def test_a_remote_entry_needs_an_http_url():
    for entry in ({"type": "http"}, {"type": "sse", "url": "ftp://x.example/sse"}):
        with pytest.raises(ValidationError):
            McpServerConfig.model_validate(entry)
