"""Channels: where Overseer meets people away from the dashboard (Telegram, push, heartbeat).

They sit above the application layer, as the REST API does, and use only its services. The host
cannot import them (imports point down), so whoever builds a serving host calls `attach(host)`,
which adds the channels the settings configure to `host.services`: the host then starts them
after recovery and stops them first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.app.host import Host


def attach(host: Host) -> None:
    """Add the configured channels to `host.services` (before `host.start()`); a second call adds none."""
    settings = host.settings
    have = {type(service).__name__ for service in host.services}
    if settings.telegram is not None and "TelegramChannel" not in have:
        from backend.channels.telegram import TelegramChannel  # the library loads only when configured

        host.services.append(TelegramChannel(host, settings.telegram))
    if (settings.notify.targets or settings.notify.webpush) and "PushNotifier" not in have:
        from backend.channels.push import PushNotifier

        host.services.append(PushNotifier(host, settings.notify))
    if settings.heartbeat.enabled and "Heartbeat" not in have:
        from backend.channels.heartbeat import Heartbeat

        host.services.append(Heartbeat(host, settings.heartbeat))
