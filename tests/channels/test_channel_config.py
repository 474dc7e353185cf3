"""The telegram, notify and heartbeat blocks of overseer.yaml: read with ${VAR}, checked by name."""

from __future__ import annotations

import pytest

from backend.config import ConfigError, load_settings

HASH = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    """The data dir, whose overseer.yaml (the admin's, read as it is) these tests write; the
    current directory is another folder (a workspace's own overseer.yaml needs trust)."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


def test_the_telegram_block_reads_its_token_from_the_environment_and_keeps_it_secret(config_dir, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "42:very-secret")
    (config_dir / "overseer.yaml").write_text(
        "telegram:\n  bot_token: ${TELEGRAM_BOT_TOKEN}\n  api_base: http://127.0.0.1:9\n"
        "  users: {123456789: ann}\n  notify: [ann]\n"
    )
    settings = load_settings()
    assert settings.telegram.bot_token.get_secret_value() == "42:very-secret"
    assert settings.telegram.users == {123456789: "ann"}
    assert "very-secret" not in repr(settings) and "very-secret" not in settings.model_dump_json()


def test_a_telegram_user_who_is_not_one_of_users_stops_the_start_by_name(config_dir):
    (config_dir / "overseer.yaml").write_text(
        f"users:\n  - {{username: ann, password_hash: '{HASH}', role: approver}}\n"
        "telegram:\n  bot_token: '1:x'\n  users: {1: ann, 2: mallory}\n"
    )
    with pytest.raises(ConfigError, match="mallory"):
        load_settings()


def test_notify_names_someone_with_a_telegram_id(config_dir):
    (config_dir / "overseer.yaml").write_text("telegram:\n  bot_token: '1:x'\n  users: {1: ann}\n  notify: [bob]\n")
    with pytest.raises(ConfigError, match="bob"):
        load_settings()


def test_durations_read_as_people_write_them(config_dir):
    (config_dir / "overseer.yaml").write_text(
        "heartbeat: {enabled: true, interval: 30m, mode: ask}\n"
        "notify:\n  notify_after: 30s\n  remind_before: 2m\n"
        "  targets: [{user: ann, ntfy: 'http://127.0.0.1:9/topic', notify_after: 1h}]\n"
    )
    settings = load_settings()
    assert (settings.heartbeat.interval, settings.heartbeat.mode) == (1800, "ask")
    assert (settings.notify.notify_after, settings.notify.remind_before) == (30, 120)
    assert settings.notify.targets[0].notify_after == 3600


def test_a_push_target_is_either_ntfy_or_apprise(config_dir):
    (config_dir / "overseer.yaml").write_text("notify:\n  targets: [{user: ann}]\n")
    with pytest.raises(ConfigError, match="exactly one"):
        load_settings()
