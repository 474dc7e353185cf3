"""Settings: YAML with ${VAR}, environment over file, clear errors, rules written back."""

from __future__ import annotations

import stat

import pytest
import yaml

from backend.config import ConfigError, append_allow_rules, load_settings


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_yaml_is_read_with_variables_expanded(in_tmp, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "s3cret")
    (in_tmp / "overseer.yaml").write_text(
        "model: openai/gpt-4o\n"
        "mcpServers:\n  github:\n    command: gh-mcp\n    args: [--stdio]\n    env: {TOKEN: '${GH_TOKEN}'}\n"
        "permissions:\n  deny: ['Bash(rm *)']\n"
        "policies:\n  mcp__github: ask\n"
    )
    settings = load_settings()
    assert settings.model == "openai/gpt-4o"
    assert settings.mcp_servers["github"].env == {"TOKEN": "s3cret"}
    assert settings.permissions.deny == ["Bash(rm *)"]
    assert settings.policies == {"mcp__github": "ask"}


def test_environment_beats_the_file(in_tmp, monkeypatch):
    (in_tmp / "overseer.yaml").write_text("model: from-file\n")
    monkeypatch.setenv("OVERSEER_MODEL", "from-env")
    assert load_settings().model == "from-env"


def test_unset_variable_is_a_clear_error(in_tmp, monkeypatch):
    monkeypatch.delenv("NOPE_NOT_SET", raising=False)
    (in_tmp / "overseer.yaml").write_text("api_base: ${NOPE_NOT_SET}\n")
    with pytest.raises(ConfigError, match="NOPE_NOT_SET"):
        load_settings()


def test_default_variable_value_is_used(in_tmp, monkeypatch):
    monkeypatch.delenv("NOPE_NOT_SET", raising=False)
    (in_tmp / "overseer.yaml").write_text("api_base: ${NOPE_NOT_SET:-http://127.0.0.1:9}\n")
    assert load_settings().api_base == "http://127.0.0.1:9"


def test_invalid_values_name_the_field(in_tmp):
    (in_tmp / "overseer.yaml").write_text("max_iterations: -3\npolicies: {mcp__x: sometimes}\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "max_iterations" in str(info.value) and "policies.mcp__x" in str(info.value)


def test_unknown_keys_are_refused(in_tmp):
    (in_tmp / "overseer.yaml").write_text("modle: typo\n")
    with pytest.raises(ConfigError, match="modle"):
        load_settings()


def test_model_wait_limits_must_be_positive_and_default_to_bounded_values(in_tmp):
    settings = load_settings()
    assert 0 < settings.model_stream_silence_timeout <= settings.model_request_timeout <= 300
    (in_tmp / "overseer.yaml").write_text("model_request_timeout: 0\nmodel_stream_silence_timeout: -1\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "model_request_timeout" in str(info.value) and "model_stream_silence_timeout" in str(info.value)


def test_the_former_model_timeout_key_still_reads_as_the_request_limit(in_tmp):
    (in_tmp / "overseer.yaml").write_text("model_timeout: 45\n")
    settings = load_settings()
    assert settings.model_request_timeout == 45


def test_always_allow_rules_are_appended_without_expanding_secrets(in_tmp):
    path = in_tmp / "overseer.yaml"
    path.write_text("api_key: ${SECRET}\npermissions:\n  allow: ['Bash(ls *)']\n")
    append_allow_rules(path, ["mcp__shell__exec(npm test *)", "Bash(ls *)"])
    data = yaml.safe_load(path.read_text())
    assert data["api_key"] == "${SECRET}"
    assert data["permissions"]["allow"] == ["Bash(ls *)", "mcp__shell__exec(npm test *)"]


def test_a_config_file_overseer_writes_is_owner_only(in_tmp):
    # It may hold API keys; Settings' always-allow writes it, possibly into a new data dir.
    path = in_tmp / "data" / "overseer.yaml"
    append_allow_rules(path, ["Bash(ls *)"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_user_with_a_plain_password_stops_the_start(in_tmp):
    (in_tmp / "overseer.yaml").write_text("users:\n  - {username: ann, password_hash: hunter2, role: admin}\n")
    with pytest.raises(ConfigError, match="users"):
        load_settings()


def test_a_server_named_like_a_built_in_is_refused_with_how_to_rename_it(in_tmp):
    # The reference memory server's usual name would have replaced Overseer's memory server, and
    # inherited the trust rules and modes give mcp__memory__* by name.
    (in_tmp / "overseer.yaml").write_text(
        "mcpServers:\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n"
    )
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "'memory'" in message and "memory-server" in message and "disabled: true" in message


def test_a_built_in_s_name_still_switches_the_built_in_off(in_tmp):
    (in_tmp / "overseer.yaml").write_text("mcpServers:\n  memory: {disabled: true}\n  github: {command: gh-mcp}\n")
    settings = load_settings()
    assert settings.mcp_servers["memory"].disabled and not settings.mcp_servers["github"].disabled
