"""Where a layer below the engine sends events: the engine's EventBus, seen as a protocol, so the
approvals and checkpoints packages publish without importing the engine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from backend.domain.models import Event, EventType


class EventPublisher(Protocol):
    async def publish(
        self,
        session_id: str,
        type_: EventType,
        data: dict[str, Any] | None = None,
        *,
        persist: Callable[[Event], Awaitable[Event]] | None = None,
        whole: bool = False,
    ) -> Event: ...
