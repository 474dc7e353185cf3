"""Heartbeat runs: every `heartbeat.interval`, an agent works through HEARTBEAT.md.

The task list is `HEARTBEAT.md` in the workspace, else in the data dir; a missing or blank file
means there is nothing to do, and no session is made. A heartbeat session has origin
`heartbeat`, shows on the dashboard like any other, and its approvals notify like any other.
Runs never overlap: while an earlier heartbeat session is still running or waiting for an
approval (even one recovered after a restart), a due beat is skipped.

Beats fall on a grid of the interval counted from the epoch, so every host of a shared database
has the same rounds; each round is claimed (`HeartbeatRuns`, backend/app/heartbeat_runs.py), and
only the host whose claim wins starts its session: one beat per round, however many hosts.

`tick()` does one round against the injected clock (what tests drive); `start()` runs the loop,
which looks again at most every MAX_WAIT seconds, so a changed clock or a suspended laptop is
noticed soon.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from backend.config import HeartbeatConfig
from backend.domain.models import ACTIVE_STATUSES, utcnow
from backend.domain.session_options import SessionOptions
from backend.paths import HEARTBEAT_FILE

if TYPE_CHECKING:
    from backend.app.services import AppServices

log = logging.getLogger(__name__)

FILE_NAME = HEARTBEAT_FILE
MAX_WAIT = 60.0
PROMPT = (
    "This is a heartbeat run: nobody asked you anything just now. Work through the task list "
    "below (from {path}); do what is due, and say briefly what you did. If nothing is due, say so.\n\n{tasks}"
)
Beat = Literal["not_due", "started", "still_running", "nothing_to_do", "beaten_elsewhere"]


class Heartbeat:
    """Started and stopped with the host; see the module docstring."""

    def __init__(
        self, services: AppServices, config: HeartbeatConfig, *, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.services = services
        self.config = config
        self.clock = clock
        self.next_due = self._round_after(clock())
        self._loop: asyncio.Task[None] | None = None

    @property
    def agent_id(self) -> str:
        """The agent woken: the configured one, else the `heartbeat` route's, else main (issue 19)."""
        return self.services.agent_routes.agent_for("heartbeat", named=self.config.agent)

    def task_file(self) -> Path | None:
        """HEARTBEAT.md of the agent's workspace, else (main) of the data dir; None when neither has one."""
        agents = self.services.agents
        agent = agents.get(self.agent_id)
        is_main = agent.id == agents.main.id
        folders = [agent.workspace, self.services.data_dir] if is_main else [agent.workspace]
        for folder in folders:
            path = folder / FILE_NAME
            if path.is_file():
                return path
        return None

    async def tick(self) -> Beat:
        """One round: start a heartbeat session if one is due, the file has tasks and none is running."""
        now = self.clock()
        if now < self.next_due:
            return "not_due"
        due, self.next_due = self.next_due, self._round_after(now)
        path = self.task_file()
        tasks = path.read_text(encoding="utf-8", errors="replace").strip() if path else ""
        if not tasks:
            return "nothing_to_do"
        if await self._running():
            log.info("heartbeat: the previous run is still going; this beat is skipped")
            return "still_running"
        # Every host of a shared database beats the same rounds; the first to claim one starts it.
        started = await self.services.heartbeat_runs.start(
            due,
            prompt=PROMPT.format(path=path, tasks=tasks),
            options=SessionOptions(
                title=f"Heartbeat {now:%Y-%m-%d %H:%M}",
                mode=self.config.mode,
                agent=self.agent_id,
                origin="heartbeat",
            ),
        )
        return "beaten_elsewhere" if started is None else "started"

    async def _running(self) -> bool:
        active = await self.services.sessions.find(statuses=list(ACTIVE_STATUSES), limit=1000)
        return any(s.origin == "heartbeat" for s in active)

    def _round_after(self, when: datetime) -> datetime:
        """The first beat time after `when` on a grid of the interval from the epoch: every host of
        a shared database computes the same rounds, whenever it started."""
        interval = self.config.interval
        return datetime.fromtimestamp((math.floor(when.timestamp() / interval) + 1) * interval, UTC)

    async def start(self) -> None:
        self._loop = asyncio.create_task(self._run(), name="heartbeat")

    async def aclose(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.wait({self._loop})

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:  # one failed beat (a broken mode, a full disk) must not stop the next
                log.exception("heartbeat: a beat failed")
            wait = (self.next_due - self.clock()).total_seconds()
            await asyncio.sleep(min(max(wait, 0.0), MAX_WAIT))  # the schedule's own pacing
