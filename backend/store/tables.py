"""The store's tables and indexes, written once and rendered as either dialect's DDL.

Each row keeps the full pydantic model as JSON text in `data`, with the columns we query on
beside it: adding a field to a model needs no migration; a new index or table does. Which step
of which database created what is each database's history (`schema.py` for SQLite,
`postgres_schema.py`); what a table is, is here.

The rendered text is laid out as the literal DDL it replaced was, so SQLite files created before
and after keep the very same statements in `sqlite_master`. A released step renders the same
forever (tests/store/test_tables.py): a column added later is a step of its own, not an edit here
that new databases alone would see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from backend.store.dialect import Dialect

ColumnType = Literal["text", "integer", "time", "instant"]
"""`time`: a `created_at` (`Dialect.time_type`); `instant`: a time compared exactly
(`Dialect.instant_type`)."""


@dataclass(kw_only=True, frozen=True)
class Column:
    """One column beside `data`."""

    name: str
    type: ColumnType = "text"
    null: bool = False
    default_now: bool = False
    """Takes the current time when an INSERT leaves it out, where the dialect can say so."""


@dataclass(kw_only=True, frozen=True)
class Table:
    """A table: its key, its columns, and what each dialect adds to it."""

    name: str
    key: tuple[str, ...]
    columns: tuple[Column, ...]
    serial: bool = False
    """The key is one number the database assigns (`Dialect.serial_key`)."""
    ordered: bool = False
    """Listed oldest first by insertion order: it needs the dialect's `order` column."""
    data: bool = True
    """It keeps a model as JSON text in `data` (the last column)."""


@dataclass(kw_only=True, frozen=True)
class Index:
    """A secondary index; its DDL is the same in both dialects."""

    name: str
    table: Table
    columns: tuple[str, ...]


def _type(column: Column, d: Dialect) -> str:
    match column.type:
        case "text":
            return "TEXT"
        case "integer":
            return "INTEGER"
        case "time":
            return d.time_type
        case "instant":
            return d.instant_type
        case _:
            assert_never(column.type)


def _column(table: Table, column: Column, d: Dialect) -> str:
    if table.key == (column.name,):
        key = d.serial_key if table.serial else f"{_type(column, d)} PRIMARY KEY"
        return f"{column.name} {key}"
    default = f" DEFAULT {d.now_default}" if column.default_now and d.now_default else ""
    return f"{column.name} {_type(column, d)}{'' if column.null else ' NOT NULL'}{default}"


def create_table(table: Table, d: Dialect) -> str:
    """The CREATE TABLE statement of `table` in dialect `d` (without its semicolon)."""
    lines = [_column(table, column, d) for column in table.columns]
    if table.ordered and d.order_column is not None:
        lines.append(d.order_column)
    if table.data:
        lines.append("data TEXT NOT NULL")
    if len(table.key) > 1:
        lines.append(f"PRIMARY KEY ({', '.join(table.key)})")
    body = ",\n        ".join(lines)
    return f"CREATE TABLE {table.name} (\n        {body}\n    )"


def create_index(index: Index) -> str:
    """The CREATE INDEX statement of `index` (without its semicolon)."""
    return f"CREATE INDEX {index.name} ON {index.table.name}({', '.join(index.columns)})"


def script(d: Dialect, *parts: Table | Index) -> str:
    """One migration step: the tables and indexes in `parts`, created in that order."""
    statements = [create_table(p, d) if isinstance(p, Table) else create_index(p) for p in parts]
    return "".join(f"\n    {statement};" for statement in statements) + "\n"


def _text(*names: str) -> tuple[Column, ...]:
    return tuple(Column(name=name) for name in names)


CREATED = Column(name="created_at", type="time")

SESSIONS = Table(
    name="sessions",
    key=("id",),
    columns=(*_text("id", "status"), Column(name="parent_id", null=True), CREATED),
    ordered=True,
)
MESSAGES = Table(
    name="messages",
    key=("session_id", "idx"),
    columns=(Column(name="session_id"), Column(name="idx", type="integer")),
)
TOOL_CALLS = Table(
    name="tool_calls",
    key=("session_id", "id"),
    columns=(*_text("session_id", "id", "status"), CREATED),
    ordered=True,
)
APPROVALS = Table(
    name="approvals",
    key=("id",),
    columns=(*_text("id", "session_id", "tool_call_id", "status"), CREATED),
    ordered=True,
)
AUDIT = Table(
    name="audit",
    key=("id",),
    columns=(Column(name="id", type="integer"), Column(name="session_id"), CREATED),
    serial=True,
)
EVENTS = Table(
    name="events",
    key=("session_id", "seq"),
    columns=(Column(name="session_id"), Column(name="seq", type="integer"), Column(name="type")),
)
SCHEDULES = Table(
    name="schedules",
    key=("id",),
    columns=(*_text("id", "status"), Column(name="next_run_at", type="instant", null=True), CREATED),
    ordered=True,
)
"""`next_run_at` is NULL while a job is paused or done."""
WORKFLOW_RUNS = Table(
    name="workflow_runs",
    key=("id",),
    columns=(*_text("id", "workflow", "status"), CREATED),
    ordered=True,
)
"""A run's steps are in its JSON; their sessions carry workflow_run_id."""
CLAIMS = Table(
    name="claims",
    key=("key",),
    columns=(Column(name="key"), Column(name="claimed_at", type="time", default_now=True)),
    data=False,
)
"""Occurrences claimed once across the processes (hosts) of a database: `claim_once`."""
CHECKPOINTS = Table(
    name="checkpoints",
    key=("session_id", "step"),
    columns=(Column(name="session_id"), Column(name="step", type="integer"), Column(name="workspace"), CREATED),
    ordered=True,
)
"""The workspace before each step of a session (issue 32); the commits are in the shadow repository."""

TOOL_PINS = Table(
    name="tool_pins",
    key=("server", "tool"),
    columns=(*_text("server", "tool", "fingerprint"), CREATED),
)
"""Each server's tools as first seen or last accepted (issue 34): a later listing that differs asks."""

GATEWAY_TASKS = Table(
    name="gateway_tasks",
    key=("id",),
    columns=(*_text("id", "owner"), CREATED),
)
"""`invoke_agent` calls the gateway runs as MCP tasks (issue 35, item 6): the session each follows,
whose it is, and its result once it ended."""

TABLES = (
    SESSIONS,
    MESSAGES,
    TOOL_CALLS,
    APPROVALS,
    AUDIT,
    EVENTS,
    SCHEDULES,
    WORKFLOW_RUNS,
    CLAIMS,
    CHECKPOINTS,
    TOOL_PINS,
    GATEWAY_TASKS,
)

SESSIONS_STATUS = Index(name="sessions_status", table=SESSIONS, columns=("status",))
SESSIONS_PARENT = Index(name="sessions_parent", table=SESSIONS, columns=("parent_id",))
"""A session's children are found by query (stops that reach sub-agents, a session's family)."""
APPROVALS_STATUS = Index(name="approvals_status", table=APPROVALS, columns=("status",))
APPROVALS_CALL = Index(name="approvals_call", table=APPROVALS, columns=("session_id", "tool_call_id"))
SCHEDULES_NEXT_RUN = Index(name="schedules_next_run", table=SCHEDULES, columns=("next_run_at",))
WORKFLOW_RUNS_STATUS = Index(name="workflow_runs_status", table=WORKFLOW_RUNS, columns=("status",))
WORKFLOW_RUNS_WORKFLOW = Index(
    name="workflow_runs_workflow", table=WORKFLOW_RUNS, columns=("workflow", "created_at")
)
CHECKPOINTS_WORKSPACE = Index(
    name="checkpoints_workspace", table=CHECKPOINTS, columns=("workspace", "created_at")
)
"""Retention goes through a workspace's checkpoints, oldest first."""
GATEWAY_TASKS_OWNER = Index(name="gateway_tasks_owner", table=GATEWAY_TASKS, columns=("owner", "created_at"))
"""`tasks/list` lists one caller's tasks, newest first."""
SESSIONS_CREATED = Index(name="sessions_created", table=SESSIONS, columns=("created_at",))
AUDIT_SESSION = Index(name="audit_session", table=AUDIT, columns=("session_id", "id"))
"""These two only Postgres has: it began with them; on SQLite they would take a migration step
of their own, which its small files have not needed."""
