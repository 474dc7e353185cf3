"""The serving app gets the channels the settings configure, once, and none otherwise."""

from __future__ import annotations

from pathlib import Path

from backend.api.app import create_app
from backend.channels import attach
from backend.channels.telegram import TelegramChannel
from backend.config import Settings


def settings_for(tmp_path: Path, **extra) -> Settings:
    return Settings(data_dir=tmp_path / "data", workspace=tmp_path, **extra)


def test_the_app_attaches_a_configured_telegram_channel_once(tmp_path: Path):
    settings = settings_for(tmp_path, telegram={"bot_token": "1:x", "api_base": "http://127.0.0.1:9"})
    app = create_app(settings)
    attach(app.state.host.app_services)  # a second attach (a host reused) adds nothing
    assert [type(s) for s in app.state.host.attached] == [TelegramChannel]


def test_without_configuration_no_channel_runs(tmp_path: Path):
    app = create_app(settings_for(tmp_path))
    assert app.state.host.attached == []
