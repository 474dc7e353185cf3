"""The Postgres schema and its migrations, numbered like SQLite's (`schema.py`).

The same tables as SQLite: each row keeps the full pydantic model as JSON text in `data`, with
the columns we query on beside it. TEXT rather than JSONB because nothing queries inside `data`
and pydantic reads the text back as it wrote it. `ord` stands in for SQLite's rowid: insertion
order, the tie-break of every "oldest first" list.

The version lives in `overseer_schema`; migrations run under a transaction-scoped advisory lock,
so hosts starting together on one database apply each step exactly once.
"""

from __future__ import annotations

# pg_advisory_xact_lock(int4, int4) keys: a class of ours, then the object within it.
LOCK_CLASS = 0x0553  # "OS"
MIGRATION_LOCK = 0
SESSION_LOCK_CLASS = LOCK_CLASS + 1  # per session: numbering messages and events

BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS overseer_schema (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    version INTEGER NOT NULL
);
INSERT INTO overseer_schema (version) VALUES (0) ON CONFLICT DO NOTHING;
"""

MIGRATIONS: list[str] = [
    # 1: the tables of SQLite's steps 1-4 at once (a new database starts at their sum).
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        parent_id TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        ord BIGINT GENERATED ALWAYS AS IDENTITY,
        data TEXT NOT NULL
    );
    CREATE INDEX sessions_status ON sessions(status);
    CREATE INDEX sessions_created ON sessions(created_at);
    CREATE INDEX sessions_parent ON sessions(parent_id);
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
        created_at TIMESTAMPTZ NOT NULL,
        ord BIGINT GENERATED ALWAYS AS IDENTITY,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
    );
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        ord BIGINT GENERATED ALWAYS AS IDENTITY,
        data TEXT NOT NULL
    );
    CREATE INDEX approvals_status ON approvals(status);
    CREATE INDEX approvals_call ON approvals(session_id, tool_call_id);
    CREATE TABLE audit (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX audit_session ON audit(session_id, id);
    CREATE TABLE events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE schedules (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        next_run_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL,
        ord BIGINT GENERATED ALWAYS AS IDENTITY,
        data TEXT NOT NULL
    );
    CREATE INDEX schedules_next_run ON schedules(next_run_at);
    CREATE TABLE workflow_runs (
        id TEXT PRIMARY KEY,
        workflow TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        ord BIGINT GENERATED ALWAYS AS IDENTITY,
        data TEXT NOT NULL
    );
    CREATE INDEX workflow_runs_status ON workflow_runs(status);
    CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow, created_at);
    -- One row counting approval writes, bumped in their transactions: `data_version`. A sequence
    -- would not do: nextval is visible before its transaction commits, so a watcher could read
    -- the new number, then the still-pending status, and never look again.
    CREATE TABLE approval_version (
        only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
        version BIGINT NOT NULL
    );
    INSERT INTO approval_version (version) VALUES (0);
    """,
    # 2: occurrences claimed once across the hosts of a database (a heartbeat round): `claim_once`.
    """
    CREATE TABLE claims (
        key TEXT PRIMARY KEY,
        claimed_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)

TABLES = ("sessions", "messages", "tool_calls", "approvals", "audit", "events", "schedules", "workflow_runs")
