"""Cron jobs in SQLite: the `schedules` table, mixed into SqliteStore.

`next_run_at` is kept beside the JSON as epoch seconds (NULL while paused or done), so "what is
due" and "when is the next one" are index lookups that compare numbers, not ISO strings.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from backend.domain.schedules import Schedule
from backend.store.base import NotFound
from backend.store.sqlite_thread import SqliteThread


def _epoch(when: datetime | None) -> float | None:
    return None if when is None else when.timestamp()


class SqliteScheduleStore:
    """Schedule CRUD and due-time queries; expects SqliteStore's `db`, `_write` and `_lock`."""

    db: SqliteThread
    _lock: asyncio.Lock

    if TYPE_CHECKING:

        async def _write(self, sql: str, params: tuple[Any, ...]) -> None: ...

    async def save_schedule(self, schedule: Schedule) -> Schedule:
        """Insert or replace a job."""
        await self._write(
            "INSERT INTO schedules (id, status, next_run_at, created_at, data) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, next_run_at = excluded.next_run_at, "
            "data = excluded.data",
            (
                schedule.id,
                schedule.status,
                _epoch(schedule.next_run_at if schedule.status == "active" else None),
                schedule.created_at.isoformat(),
                schedule.model_dump_json(),
            ),
        )
        return schedule

    async def claim_schedule(self, due: Schedule, advanced: Schedule) -> bool:
        """Save `advanced` only if the stored job is still due as `due` was; False if another claimed it.

        This compare-and-set is what keeps two processes on one database from firing a run twice.
        """
        async with self._lock:
            cursor = await self.db.execute(
                "UPDATE schedules SET status = ?, next_run_at = ?, data = ? "
                "WHERE id = ? AND status = 'active' AND next_run_at = ?",
                (
                    advanced.status,
                    _epoch(advanced.next_run_at if advanced.status == "active" else None),
                    advanced.model_dump_json(),
                    due.id,
                    _epoch(due.next_run_at),
                ),
            )
        return cursor.rowcount == 1

    async def claim_once(self, key: str) -> bool:
        """True for the first caller of `key` (a process on this file included), False ever after."""
        async with self._lock:
            cursor = await self.db.execute(
                "INSERT INTO claims (key, claimed_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, datetime.now(UTC).isoformat()),
            )
        return cursor.rowcount == 1

    async def get_schedule(self, schedule_id: str) -> Schedule:
        rows = await self.db.fetch_all("SELECT data FROM schedules WHERE id = ?", (schedule_id,))
        if not rows:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
        return Schedule.model_validate_json(rows[0][0])

    async def list_schedules(self) -> list[Schedule]:
        """Every job, oldest first."""
        rows = await self.db.fetch_all("SELECT data FROM schedules ORDER BY created_at, rowid")
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def due_schedules(self, now: datetime) -> list[Schedule]:
        """Active jobs whose next run is at or before `now`, most overdue first."""
        rows = await self.db.fetch_all(
            "SELECT data FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at <= ? "
            "AND status = 'active' ORDER BY next_run_at, rowid",
            (now.timestamp(),),
        )
        return [Schedule.model_validate_json(r[0]) for r in rows]

    async def next_schedule_time(self) -> datetime | None:
        """The earliest next run of any active job (UTC), or None when nothing is scheduled."""
        rows = await self.db.fetch_all(
            "SELECT MIN(next_run_at) FROM schedules WHERE next_run_at IS NOT NULL AND status = 'active'"
        )
        value = rows[0][0]
        return None if value is None else datetime.fromtimestamp(value, UTC)

    async def delete_schedule(self, schedule_id: str) -> None:
        async with self._lock:
            cursor = await self.db.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,))
        if cursor.rowcount == 0:
            raise NotFound(f"schedule {schedule_id!r} does not exist")
