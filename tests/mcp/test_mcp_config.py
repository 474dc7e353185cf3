"""McpServerConfig: Claude Desktop entries parse unchanged; Overseer's extras have defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.mcp.config import (
    BUILTIN_SERVERS,
    MANAGED_ENV_VAR,
    HostApi,
    McpServerConfig,
    builtin_servers,
    parse_mcp_servers,
)


def test_a_claude_desktop_file_parses_unchanged():
    data = {
        "mcpServers": {
            "github": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_TOKEN": "t"},
            },
            "local": {"type": "stdio", "command": "my-server"},
        }
    }
    servers = parse_mcp_servers(data)
    assert servers["github"].args == ["-y", "@modelcontextprotocol/server-github"]
    assert servers["github"].env == {"GITHUB_TOKEN": "t"}
    assert servers["local"].args == [] and servers["local"].env == {}


def test_the_inner_mapping_parses_too():
    assert list(parse_mcp_servers({"a": {"command": "x"}})) == ["a"]


def test_overseer_extras_have_defaults():
    config = McpServerConfig(command="x")
    assert (config.cwd, config.start_timeout, config.call_timeout) == (None, 30, 120)
    assert not config.disabled and not config.managed


def test_unknown_keys_and_unknown_transports_are_refused():
    with pytest.raises(ValidationError):
        McpServerConfig.model_validate({"command": "x", "arg": ["typo"]})
    with pytest.raises(ValidationError):
        McpServerConfig.model_validate({"type": "ws", "url": "wss://example.com/mcp"})


def test_server_names_must_fit_in_tool_names():
    for bad in ("a__b", "has space", "", "x" * 41):
        with pytest.raises(ValueError):
            parse_mcp_servers({bad: {"command": "x"}})


def test_only_managed_servers_get_the_managed_flag():
    assert McpServerConfig(command="x", env={"A": "1"}, managed=True).process_env() == {
        "A": "1",
        MANAGED_ENV_VAR: "1",
    }
    assert MANAGED_ENV_VAR not in McpServerConfig(command="x").process_env()


def test_builtin_servers_run_our_packages_with_the_given_root(tmp_path: Path):
    servers = builtin_servers(root=tmp_path, python="/usr/bin/python3")
    assert set(servers) == set(BUILTIN_SERVERS)
    assert {"file", "shell", "invoke_agent"} <= set(servers)
    assert servers["file"].command == "/usr/bin/python3"
    assert servers["file"].args == ["-m", "mcp_servers.file", "--root", str(tmp_path)]
    assert servers["shell"].args[:2] == ["-m", "mcp_servers.shell"]
    assert all(config.managed for config in servers.values())


def test_servers_that_call_the_host_back_get_its_url_and_token_in_their_environment(tmp_path: Path):
    api = HostApi(url="http://127.0.0.1:9999", token="secret-token")
    servers = builtin_servers(root=tmp_path, host_api=api)
    assert servers["invoke_agent"].env == {"OVERSEER_HOST_URL": api.url, "OVERSEER_TOKEN": "secret-token"}
    assert "secret-token" not in " ".join(servers["invoke_agent"].args)
    assert servers["file"].env == {}
    # A child run is bounded by its own limits, not by the pool's default call timeout.
    assert servers["invoke_agent"].call_timeout > servers["file"].call_timeout


def test_without_a_host_api_no_server_gets_a_host_url(tmp_path: Path):
    servers = builtin_servers(root=tmp_path)
    assert all("OVERSEER_HOST_URL" not in config.env for config in servers.values())


def test_the_file_server_alone_gets_a_read_root_argument_for_each_read_root(tmp_path: Path):
    skills = [tmp_path / "data" / "skills", tmp_path / "builtin"]
    servers = builtin_servers(root=tmp_path, read_roots=skills)
    assert servers["file"].args == [
        "-m",
        "mcp_servers.file",
        "--root",
        str(tmp_path),
        "--read-root",
        str(skills[0]),
        "--read-root",
        str(skills[1]),
    ]
    assert all("--read-root" not in config.args for name, config in servers.items() if name != "file")
    assert "--read-root" not in builtin_servers(root=tmp_path)["file"].args


def test_the_host_gives_the_file_server_the_skill_folders(tmp_path: Path):
    from backend.config import Settings
    from backend.app.host import server_configs
    from backend.paths import BUILTIN_SKILLS_DIR

    settings = Settings(data_dir=tmp_path / "data", workspace=tmp_path)
    args = server_configs(settings)["file"].args
    assert args[args.index("--read-root") + 1] == str(tmp_path / "data" / "skills")
    assert args[-2:] == ["--read-root", str(BUILTIN_SKILLS_DIR)]
