"""Cron jobs and once-only claims, written once for both databases; mixed into SqlStore.

`next_run_at` is kept beside the JSON (NULL while paused or done), so "what is due" and "when is
the next one" are index lookups. It is an `instant` (`Dialect.instant`): the claim's
compare-and-set matches the very value the job was read with.
"""

from __future__ import annotations

from datetime import UTC, datetime

from backend.domain.schedules import Schedule
from backend.store.base import NotFound
from backend.store.sql_seam import SqlSeam


class SqlSchedules(SqlSeam):
    """Schedule CRUD, due-time queries and `claim_once`."""

    def _next_run(self, schedule: Schedule) -> object:
        """The stored next run: none while the job is not active."""
        when = schedule.next_run_at if schedule.status == "active" else None
        return None if when is None else self.sql.dialect.instant(when)

    async def save_schedule(self, schedule: Schedule) -> Schedule:
        """Insert or replace a job."""
        created = self.sql.dialect.time(schedule.created_at)
        await self._execute(
            self.sql.upsert_schedule,
            (schedule.id, schedule.status, self._next_run(schedule), created, schedule.model_dump_json()),
        )
        return schedule

    async def claim_schedule(self, due: Schedule, advanced: Schedule) -> bool:
        """Save `advanced` only if the stored job is still due as `due` was; False if another claimed it.

        This compare-and-set is what keeps two processes (hosts) on one database from firing a run
        twice: the second UPDATE finds the row moved on (SQLite's write lock; Postgres's row lock
        makes it re-check the committed row).
        """
        was = None if due.next_run_at is None else self.sql.dialect.instant(due.next_run_at)
        changed = await self._execute(
            self.sql.claim_schedule,
            (advanced.status, self._next_run(advanced), advanced.model_dump_json(), due.id, was),
        )
        return changed == 1

    async def claim_once(self, key: str) -> bool:
        """True for the first caller of `key` in any process of this database, False ever after."""
        claimed = await self._execute(self.sql.claim_once, (key, self.sql.dialect.time(datetime.now(UTC))))
        return claimed == 1

    async def get_schedule(self, schedule_id: str) -> Schedule:
        rows = await self._fetch_all(self.sql.get_schedule, (schedule_id,))
        if not rows:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
        return Schedule.model_validate_json(rows[0][0])

    async def list_schedules(self) -> list[Schedule]:
        """Every job, oldest first."""
        rows = await self._fetch_all(self.sql.list_schedules)
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def due_schedules(self, now: datetime) -> list[Schedule]:
        """Active jobs whose next run is at or before `now`, most overdue first."""
        rows = await self._fetch_all(self.sql.due_schedules, (self.sql.dialect.instant(now),))
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def next_schedule_time(self) -> datetime | None:
        """The earliest next run of any active job (UTC), or None when nothing is scheduled."""
        rows = await self._fetch_all(self.sql.next_schedule_time)
        value = rows[0][0]
        return None if value is None else self.sql.dialect.read_instant(value)

    async def delete_schedule(self, schedule_id: str) -> None:
        if await self._execute(self.sql.delete_schedule, (schedule_id,)) == 0:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
