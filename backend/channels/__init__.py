"""Channels: where Overseer meets people away from the dashboard (Telegram, push, heartbeat).

They sit above the application layer, as the REST API does, and use only its services
(`AppServices`), never the Host. The host cannot import them (imports point down), so whoever
builds a serving host calls `attach(host.app_services)`, which adds the channels the settings
configure to `services.lifecycle.attached`: the host then starts them after recovery and stops
them first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.app.services import AppServices


def attach(services: AppServices) -> None:
    """Add the configured channels to `services.lifecycle.attached` (before the host starts); a
    second call adds none."""
    settings = services.settings
    attached = services.lifecycle.attached
    have = {type(channel).__name__ for channel in attached}
    if settings.telegram is not None and "TelegramChannel" not in have:
        from backend.channels.telegram import TelegramChannel  # the library loads only when configured

        attached.append(TelegramChannel(services, settings.telegram))
    if (settings.notify.targets or settings.notify.webpush) and "PushNotifier" not in have:
        from backend.channels.push import PushNotifier

        attached.append(PushNotifier(services, settings.notify))
    if settings.heartbeat.enabled and "Heartbeat" not in have:
        from backend.channels.heartbeat import Heartbeat

        attached.append(Heartbeat(services, settings.heartbeat))
