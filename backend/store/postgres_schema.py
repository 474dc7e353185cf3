"""The Postgres schema's history, numbered like SQLite's (`schema.py`), and its locks.

The tables are SQLite's (`tables.py`); TEXT rather than JSONB for `data` because nothing queries
inside it that needs an index and pydantic reads the text back as it wrote it. `ord` stands in
for SQLite's rowid (`Dialect.order`).

The version lives in `overseer_schema`; migrations run under a transaction-scoped advisory lock,
so hosts starting together on one database apply each step exactly once.
"""

from __future__ import annotations

from backend.store.dialect import POSTGRES
from backend.store.tables import (
    APPROVALS,
    APPROVALS_CALL,
    APPROVALS_STATUS,
    AUDIT,
    AUDIT_SESSION,
    CHECKPOINTS,
    CHECKPOINTS_WORKSPACE,
    CLAIMS,
    EVENTS,
    GATEWAY_TASKS,
    GATEWAY_TASKS_OWNER,
    MESSAGES,
    SCHEDULES,
    SCHEDULES_NEXT_RUN,
    SESSIONS,
    SESSIONS_CREATED,
    SESSIONS_PARENT,
    SESSIONS_STATUS,
    TOOL_CALLS,
    TOOL_PINS,
    WORKFLOW_RUNS,
    WORKFLOW_RUNS_STATUS,
    WORKFLOW_RUNS_WORKFLOW,
    script,
)

# pg_advisory_xact_lock(int4, int4) keys: a class of ours, then the object within it.
LOCK_CLASS = 0x0553  # "OS"
MIGRATION_LOCK = 0
SESSION_LOCK_CLASS = LOCK_CLASS + 1  # per session: numbering messages and events
WORKSPACE_LOCK_CLASS = LOCK_CLASS + 2  # per workspace: writing its shadow repository (issue 32)

BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS overseer_schema (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    version INTEGER NOT NULL
);
INSERT INTO overseer_schema (version) VALUES (0) ON CONFLICT DO NOTHING;
"""

# One row counting approval writes, bumped in their transactions: `data_version` (SQLite has
# `PRAGMA data_version` instead). A sequence would not do: nextval is visible before its
# transaction commits, so a watcher could read the new number, then the still-pending status,
# and never look again.
APPROVAL_VERSION = """
    CREATE TABLE approval_version (
        only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
        version BIGINT NOT NULL
    );
    INSERT INTO approval_version (version) VALUES (0);
"""

MIGRATIONS: list[str] = [
    # 1: the tables of SQLite's steps 1-4 at once (a new database starts at their sum).
    script(
        POSTGRES,
        SESSIONS,
        SESSIONS_STATUS,
        SESSIONS_CREATED,
        SESSIONS_PARENT,
        MESSAGES,
        TOOL_CALLS,
        APPROVALS,
        APPROVALS_STATUS,
        APPROVALS_CALL,
        AUDIT,
        AUDIT_SESSION,
        EVENTS,
        SCHEDULES,
        SCHEDULES_NEXT_RUN,
        WORKFLOW_RUNS,
        WORKFLOW_RUNS_STATUS,
        WORKFLOW_RUNS_WORKFLOW,
    )
    + APPROVAL_VERSION,
    # 2: occurrences claimed once across the hosts of a database (a heartbeat round): `claim_once`.
    script(POSTGRES, CLAIMS),
    # 3: checkpoints of the workspace before each step (issue 32).
    script(POSTGRES, CHECKPOINTS, CHECKPOINTS_WORKSPACE),
    # 4: tools pinned against silent change (issue 34).
    script(POSTGRES, TOOL_PINS),
    # 5: invoke_agent calls run as MCP tasks (issue 35).
    script(POSTGRES, GATEWAY_TASKS, GATEWAY_TASKS_OWNER),
]

SCHEMA_VERSION = len(MIGRATIONS)
