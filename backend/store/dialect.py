"""What SQLite and Postgres spell differently, named once: everything else of the store's SQL is shared.

The tables (`tables.py`), the fixed statements (`statements.py`) and the filters (`queries.py`)
are written once and rendered with one of the two dialects below. What is not a matter of
spelling (SQLite's thread and write lock, Postgres's pool, advisory locks and LISTEN/NOTIFY)
stays in each store's own modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal


@dataclass(kw_only=True, frozen=True)
class Dialect:
    """How one database spells what the store's SQL needs."""

    name: Literal["sqlite", "postgres"]
    mark: str
    """The parameter placeholder (`?`, `%s`)."""
    order: str
    """The insertion-order column, the tie-break of every "oldest first" list: SQLite's own `rowid`,
    Postgres's `ord` (its tables have no row number of their own)."""
    order_column: str | None
    """The DDL of `order` in a table that needs one; None where every table has it already."""
    serial_key: str
    """The type and key of a column the database numbers itself (the audit log's id)."""
    returning_id: str
    """What makes an INSERT give back that number: SQLite's cursor has it (`lastrowid`),
    Postgres returns it."""
    time_type: str
    """The type of a `created_at` column: ISO text in SQLite (it sorts as time, all of it UTC),
    a TIMESTAMPTZ in Postgres."""
    time: Callable[[datetime], Any]
    """A timestamp as a `time_type` column stores and compares it."""
    instant_type: str
    """The type of a time compared for equality and order (a schedule's next run): epoch seconds
    in SQLite, exact to the microsecond in Postgres."""
    instant: Callable[[datetime], Any]
    """A time as an `instant_type` column stores it."""
    read_instant: Callable[[Any], datetime]
    """A time as an `instant_type` column gives it back."""
    now_default: str | None
    """The DEFAULT of a column that may take the current time; None in SQLite, whose clock text
    (`CURRENT_TIMESTAMP`) is not the ISO text we store: the store always writes the time there."""
    row_lock: str
    """What a SELECT adds to hold the row until its transaction ends: nothing in SQLite, whose
    BEGIN IMMEDIATE already holds the database; FOR UPDATE in Postgres."""
    field: Callable[[str, str], str]
    """The SQL text of a JSON field: (column, dotted path) -> expression giving text."""
    like: str
    """The case-insensitive LIKE (SQLite's LIKE is, for ASCII; Postgres needs ILIKE)."""
    true: str
    """What a JSON `true` reads as through `field` (SQLite gives 1, Postgres the text 'true')."""


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def _sqlite_field(column: str, path: str) -> str:
    return f"json_extract({column}, '$.{path}')"


def _postgres_field(column: str, path: str) -> str:
    return f"({column}::jsonb #>> '{{{','.join(path.split('.'))}}}')"


SQLITE = Dialect(
    name="sqlite",
    mark="?",
    order="rowid",
    order_column=None,
    serial_key="INTEGER PRIMARY KEY AUTOINCREMENT",
    returning_id="",
    time_type="TEXT",
    time=lambda t: _utc(t).isoformat(),
    instant_type="REAL",
    instant=lambda t: t.timestamp(),
    read_instant=lambda value: datetime.fromtimestamp(value, UTC),
    now_default=None,
    row_lock="",
    field=_sqlite_field,
    like="LIKE",
    true="1",
)

POSTGRES = Dialect(
    name="postgres",
    mark="%s",
    order="ord",
    order_column="ord BIGINT GENERATED ALWAYS AS IDENTITY",
    serial_key="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    returning_id=" RETURNING id",
    time_type="TIMESTAMPTZ",
    time=_utc,
    instant_type="TIMESTAMPTZ",
    instant=lambda t: t,
    read_instant=lambda value: value,
    now_default="now()",
    row_lock=" FOR UPDATE",
    field=_postgres_field,
    like="ILIKE",
    true="'true'",
)
