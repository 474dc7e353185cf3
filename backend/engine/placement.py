"""Where a session's run executes: in this process at once, or on whichever host a queue picks.

With SQLite (one host) a run is an asyncio task of this process, as it always was:
`LocalPlacement`. With a shared Postgres, `backend.cluster.dbos_runs.DbosPlacement` enqueues a DBOS
workflow that any host with room takes; its body drives that host's runner. The runner sees
only this seam: place a run, ask whether to recover a session at start, wait for a run that
may execute elsewhere.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol


class RunHost(Protocol):
    """The runner of this process, as a placement drives it."""

    def run_here(self, session_id: str) -> asyncio.Task[None]:
        """The session's run in this process: the one going on, or a new one."""
        ...


class Placement(Protocol):
    """Decides where a session's run executes."""

    async def place(self, session_id: str) -> None:
        """Make sure a run will read the session's newest messages: start one, or leave it to the
        run already placed (which looks for new messages before it ends)."""
        ...

    async def may_recover(self, session_id: str) -> bool:
        """At start, for an active session no run of this process has: whether to start one.
        False when a run is placed for it already (another host runs it, or will recover it)."""
        ...

    async def wait_elsewhere(self, session_id: str, timeout: float | None) -> None:
        """Wait (bounded: TimeoutError) while the session is active with no run in this process."""
        ...


@dataclass(kw_only=True)
class LocalPlacement:
    """Every run in this process, started at once: the single host's placement (SQLite)."""

    host: RunHost

    async def place(self, session_id: str) -> None:
        self.host.run_here(session_id)

    async def may_recover(self, session_id: str) -> bool:
        # Nothing else runs sessions of this store: every active one was left by our own last life.
        return True

    async def wait_elsewhere(self, session_id: str, timeout: float | None) -> None:
        # Runs never execute elsewhere: an active session without a task here has nobody to wait for.
        return None
