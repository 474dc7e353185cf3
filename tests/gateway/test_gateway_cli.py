"""`overseer mcp-config ...` and `overseer mcp`'s argument checks (cli.py, gateway/client_config.py)."""

from __future__ import annotations

import json
from pathlib import Path

from backend.cli import main


def test_mcp_config_for_claude_desktop_starts_overseer_mcp_by_absolute_path_in_a_pinned_workspace(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("OVERSEER_MODEL", "anthropic/claude-sonnet-4-5")
    assert main(["--data-dir", str(tmp_path / "data"), "mcp-config", "claude-desktop"]) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["overseer"]
    assert Path(server["command"]).is_absolute()
    assert server["args"][-3:] == ["--data-dir", str((tmp_path / "data").resolve()), "mcp"]
    assert server["env"] == {
        "OVERSEER_WORKSPACE": str(tmp_path.resolve()),
        "OVERSEER_MODEL": "anthropic/claude-sonnet-4-5",
    }
    assert "type" not in server


def test_mcp_config_for_claude_code_with_a_host_url_bridges_to_it_and_writes_no_secret(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OVERSEER_TOKEN", "s3cret-token")
    assert main(["mcp-config", "claude-code", "--host-url", "http://127.0.0.1:8000"]) == 0
    printed = capsys.readouterr().out
    server = json.loads(printed)["mcpServers"]["overseer"]
    assert server["type"] == "stdio"
    assert server["args"][-3:] == ["mcp", "--host-url", "http://127.0.0.1:8000"]
    assert server["env"] == {}
    assert "s3cret-token" not in printed


def test_mcp_refuses_expose_tools_together_with_a_host_url(capsys):
    assert main(["mcp", "--host-url", "http://127.0.0.1:9", "--expose-tools"]) == 2
    assert capsys.readouterr().err.startswith("overseer mcp: ")


def test_expose_tools_in_the_config_turns_the_gateway_s_tool_export_on(tmp_path):
    from backend.api.app import create_app
    from backend.config import Settings

    on = create_app(Settings(data_dir=tmp_path / "a", workspace=tmp_path, expose_tools=True, builtin_servers=False))
    off = create_app(Settings(data_dir=tmp_path / "b", workspace=tmp_path, builtin_servers=False))
    both = Settings(data_dir=tmp_path / "c", workspace=tmp_path, expose_tools=True, builtin_servers=False)
    forced = create_app(both, expose_tools=False)
    exported = [app.state.gateway.gateway.exposed is not None for app in (on, off, forced)]
    assert exported == [True, False, False]


def test_mcp_config_for_claude_code_pins_the_current_directory_as_the_workspace(tmp_path, capsys, monkeypatch):
    # Claude Code starts servers in the project, but other clients (and `/`) do not: always pin it.
    monkeypatch.delenv("OVERSEER_WORKSPACE", raising=False)
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert main(["mcp-config", "claude-code"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["mcpServers"]["overseer"]["env"]["OVERSEER_WORKSPACE"] == str(tmp_path.resolve())
    assert str(tmp_path.resolve()) in printed.err


def test_mcp_config_writes_the_workspace_its_flag_names(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OVERSEER_WORKSPACE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    assert main(["mcp-config", "claude-desktop", "--workspace", str(tmp_path / "project")]) == 0
    server = json.loads(capsys.readouterr().out)["mcpServers"]["overseer"]
    assert server["env"]["OVERSEER_WORKSPACE"] == str((tmp_path / "project").resolve())


def test_a_workspace_for_a_running_host_is_refused(capsys):
    assert main(["mcp", "--host-url", "http://127.0.0.1:9", "--workspace", "/tmp"]) == 2
    assert capsys.readouterr().err.startswith("overseer mcp: ")
    assert main(["mcp-config", "claude-code", "--host-url", "http://127.0.0.1:9", "--workspace", "/tmp"]) == 2
