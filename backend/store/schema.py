"""The SQLite schema's history, keyed by `PRAGMA user_version`: which step created which of the
tables and indexes written once in `tables.py`. A new index or table is a new step, appended."""

from __future__ import annotations

from backend.store.dialect import SQLITE
from backend.store.tables import (
    APPROVALS,
    APPROVALS_CALL,
    APPROVALS_STATUS,
    AUDIT,
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
    SESSIONS_PARENT,
    SESSIONS_STATUS,
    TOOL_CALLS,
    TOOL_PINS,
    WORKFLOW_RUNS,
    WORKFLOW_RUNS_STATUS,
    WORKFLOW_RUNS_WORKFLOW,
    script,
)

MIGRATIONS: list[str] = [
    # 1: the first schema.
    script(
        SQLITE,
        SESSIONS,
        SESSIONS_STATUS,
        MESSAGES,
        TOOL_CALLS,
        APPROVALS,
        APPROVALS_STATUS,
        APPROVALS_CALL,
        AUDIT,
        EVENTS,
    ),
    # 2: cron jobs; next_run_at is epoch seconds, NULL while a job is paused or done.
    script(SQLITE, SCHEDULES, SCHEDULES_NEXT_RUN),
    # 3: workflow runs.
    script(SQLITE, WORKFLOW_RUNS, WORKFLOW_RUNS_STATUS, WORKFLOW_RUNS_WORKFLOW),
    # 4: a session's children are found by query.
    script(SQLITE, SESSIONS_PARENT),
    # 5: occurrences claimed once across the processes of a database (a heartbeat round).
    script(SQLITE, CLAIMS),
    # 6: checkpoints of the workspace before each step (issue 32).
    script(SQLITE, CHECKPOINTS, CHECKPOINTS_WORKSPACE),
    # 7: tools pinned against silent change (issue 34).
    script(SQLITE, TOOL_PINS),
    # 8: invoke_agent calls run as MCP tasks (issue 35).
    script(SQLITE, GATEWAY_TASKS, GATEWAY_TASKS_OWNER),
]

SCHEMA_VERSION = len(MIGRATIONS)
