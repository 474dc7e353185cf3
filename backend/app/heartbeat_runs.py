"""HeartbeatRuns: a heartbeat round's session, started by one host of the database only.

Every host of a shared database beats the same rounds (backend/channels/heartbeat.py); each
round is claimed in the store (`claim_once`, one row per key on SQLite and Postgres alike), and
only the host whose claim wins starts the round's session.
"""

from __future__ import annotations

from datetime import datetime

from backend.app.sessions import SessionService
from backend.domain.models import Session
from backend.domain.session_options import SessionOptions
from backend.store.base import Store


class HeartbeatRuns:
    """Claims heartbeat rounds across hosts and starts the session of each one won."""

    def __init__(self, *, store: Store, sessions: SessionService) -> None:
        self._store = store
        self._sessions = sessions

    async def start(self, due: datetime, *, prompt: str, options: SessionOptions) -> Session | None:
        """Claim the round due at `due`, then start its session on `prompt`; None: another host has it."""
        if not await self._store.claim_once(f"heartbeat:{due.isoformat()}"):
            return None
        return await self._sessions.start(prompt=prompt, options=options)
