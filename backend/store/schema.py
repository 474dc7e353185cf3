"""The SQLite schema and its migrations, keyed by `PRAGMA user_version`.

Each row keeps the full pydantic model as JSON in `data`, with the columns we query on beside
it. Adding a field to a model needs no migration; a new index or table does: append a step.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: the first schema.
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        parent_id TEXT,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX sessions_status ON sessions(status);
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    );
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
    );
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX approvals_status ON approvals(status);
    CREATE INDEX approvals_call ON approvals(session_id, tool_call_id);
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE TABLE events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    """,
    # 2: cron jobs; next_run_at is epoch seconds, NULL while a job is paused or done.
    """
    CREATE TABLE schedules (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        next_run_at REAL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX schedules_next_run ON schedules(next_run_at);
    """,
    # 3: workflow runs (a run's steps are in its JSON; their sessions carry workflow_run_id).
    """
    CREATE TABLE workflow_runs (
        id TEXT PRIMARY KEY,
        workflow TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX workflow_runs_status ON workflow_runs(status);
    CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow, created_at);
    """,
    # 4: a session's children are found by query (stops that reach sub-agents, a session's family).
    """
    CREATE INDEX sessions_parent ON sessions(parent_id);
    """,
    # 5: occurrences claimed once across the processes of a database (a heartbeat round): `claim_once`.
    """
    CREATE TABLE claims (
        key TEXT PRIMARY KEY,
        claimed_at TEXT NOT NULL
    );
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
