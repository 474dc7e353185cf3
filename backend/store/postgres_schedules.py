"""Cron jobs in Postgres: the `schedules` table, mixed into PostgresStore.

`next_run_at` is a TIMESTAMPTZ beside the JSON (NULL while paused or done): exact to the
microsecond, so the claim's compare-and-set matches the very time the job was read with.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from backend.domain.schedules import Schedule
from backend.store.base import NotFound


class PostgresScheduleStore:
    """Schedule CRUD and due-time queries; expects PostgresStore's `_execute` and `_fetch_all`."""

    if TYPE_CHECKING:

        async def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int: ...
        async def _fetch_all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

    async def save_schedule(self, schedule: Schedule) -> Schedule:
        """Insert or replace a job."""
        await self._execute(
            "INSERT INTO schedules (id, status, next_run_at, created_at, data) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, next_run_at = excluded.next_run_at, "
            "data = excluded.data",
            (
                schedule.id,
                schedule.status,
                schedule.next_run_at if schedule.status == "active" else None,
                schedule.created_at,
                schedule.model_dump_json(),
            ),
        )
        return schedule

    async def claim_schedule(self, due: Schedule, advanced: Schedule) -> bool:
        """Save `advanced` only if the stored job is still due as `due` was; False if another claimed it.

        The row lock of the UPDATE makes a second host's claim re-check the committed row and miss.
        """
        changed = await self._execute(
            "UPDATE schedules SET status = %s, next_run_at = %s, data = %s "
            "WHERE id = %s AND status = 'active' AND next_run_at = %s",
            (
                advanced.status,
                advanced.next_run_at if advanced.status == "active" else None,
                advanced.model_dump_json(),
                due.id,
                due.next_run_at,
            ),
        )
        return changed == 1

    async def claim_once(self, key: str) -> bool:
        """True for the first caller of `key` on any host, False ever after (the key's row is the claim)."""
        return await self._execute("INSERT INTO claims (key) VALUES (%s) ON CONFLICT (key) DO NOTHING", (key,)) == 1

    async def get_schedule(self, schedule_id: str) -> Schedule:
        rows = await self._fetch_all("SELECT data FROM schedules WHERE id = %s", (schedule_id,))
        if not rows:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
        return Schedule.model_validate_json(rows[0][0])

    async def list_schedules(self) -> list[Schedule]:
        """Every job, oldest first."""
        rows = await self._fetch_all("SELECT data FROM schedules ORDER BY created_at, ord")
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def due_schedules(self, now: datetime) -> list[Schedule]:
        """Active jobs whose next run is at or before `now`, most overdue first."""
        rows = await self._fetch_all(
            "SELECT data FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at <= %s "
            "AND status = 'active' ORDER BY next_run_at, ord",
            (now,),
        )
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def next_schedule_time(self) -> datetime | None:
        """The earliest next run of any active job (UTC), or None when nothing is scheduled."""
        rows = await self._fetch_all(
            "SELECT MIN(next_run_at) FROM schedules WHERE next_run_at IS NOT NULL AND status = 'active'"
        )
        value: datetime | None = rows[0][0]
        return value

    async def delete_schedule(self, schedule_id: str) -> None:
        if await self._execute("DELETE FROM schedules WHERE id = %s", (schedule_id,)) == 0:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
