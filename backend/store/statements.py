"""The store's fixed SQL statements, written once and rendered per dialect (`SQLITE_SQL`, `POSTGRES_SQL`).

Rendered once at import, not per call: the transcript's writes run on every tool call. Lists
whose WHERE varies are put together where they run (`sql_store.py`, with `queries.py`).
"""

from __future__ import annotations

from backend.domain.models import ACTIVE_STATUSES
from backend.store.dialect import POSTGRES, SQLITE, Dialect

SESSION_ROWS = ("messages", "tool_calls", "approvals", "events", "checkpoints")
"""The tables whose rows belong to one session, deleted with it."""


def _marks(d: Dialect, count: int) -> str:
    return ", ".join([d.mark] * count)


class Statements:
    """Every fixed statement the stores run, in one dialect."""

    def __init__(self, d: Dialect) -> None:
        self.dialect = d
        m, order = d.mark, d.order
        # sessions
        self.insert_session = (
            f"INSERT INTO sessions (id, status, parent_id, created_at, data) VALUES ({_marks(d, 5)})"
        )
        self.get_session = f"SELECT data FROM sessions WHERE id = {m}"
        # The row a change is decided on, held until the change commits (`Dialect.row_lock`).
        self.lock_session = f"SELECT data FROM sessions WHERE id = {m}{d.row_lock}"
        self.update_session = f"UPDATE sessions SET status = {m}, data = {m} WHERE id = {m}"
        self.delete_session_rows = [f"DELETE FROM {table} WHERE session_id = {m}" for table in SESSION_ROWS]
        self.delete_session = f"DELETE FROM sessions WHERE id = {m}"

        # the transcript: messages, tool calls, events
        # A session's next message idx and next event seq, read inside the write that uses them.
        self.next_numbers = (
            f"SELECT (SELECT COALESCE(MAX(idx), -1) + 1 FROM messages WHERE session_id = {m}),"
            f" (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = {m})"
        )
        self.insert_message = f"INSERT INTO messages (session_id, idx, data) VALUES ({_marks(d, 3)})"
        self.list_messages = f"SELECT data FROM messages WHERE session_id = {m} ORDER BY idx"
        self.upsert_call = (
            f"INSERT INTO tool_calls (session_id, id, status, created_at, data) VALUES ({_marks(d, 5)}) "
            "ON CONFLICT (session_id, id) DO UPDATE SET status = excluded.status, data = excluded.data"
        )
        self.list_calls = f"SELECT data FROM tool_calls WHERE session_id = {m} ORDER BY created_at, {order}"
        self.insert_event = f"INSERT INTO events (session_id, seq, type, data) VALUES ({_marks(d, 4)})"
        self.last_seq = f"SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = {m}"
        self.list_events = (
            f"SELECT data FROM events WHERE session_id = {m} AND seq > {m} ORDER BY seq LIMIT {m}"
        )

        # approvals and the audit log
        self.upsert_approval = (
            "INSERT INTO approvals (id, session_id, tool_call_id, status, created_at, data) "
            f"VALUES ({_marks(d, 6)}) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data"
        )
        # A compare-and-set: of two answers at once, one matches the pending row.
        self.close_approval = (
            f"UPDATE approvals SET status = {m}, data = {m} WHERE id = {m} AND status = 'pending'"
        )
        self.get_approval = f"SELECT data FROM approvals WHERE id = {m}"
        self.insert_audit = (
            f"INSERT INTO audit (session_id, created_at, data) VALUES ({_marks(d, 3)}){d.returning_id}"
        )

        # schedules and claims
        self.upsert_schedule = (
            f"INSERT INTO schedules (id, status, next_run_at, created_at, data) VALUES ({_marks(d, 5)}) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, next_run_at = excluded.next_run_at, "
            "data = excluded.data"
        )
        self.claim_schedule = (
            f"UPDATE schedules SET status = {m}, next_run_at = {m}, data = {m} "
            f"WHERE id = {m} AND status = 'active' AND next_run_at = {m}"
        )
        self.claim_once = (
            f"INSERT INTO claims (key, claimed_at) VALUES ({_marks(d, 2)}) ON CONFLICT (key) DO NOTHING"
        )
        self.get_schedule = f"SELECT data FROM schedules WHERE id = {m}"
        self.list_schedules = f"SELECT data FROM schedules ORDER BY created_at, {order}"
        self.due_schedules = (
            f"SELECT data FROM schedules WHERE next_run_at IS NOT NULL AND next_run_at <= {m} "
            f"AND status = 'active' ORDER BY next_run_at, {order}"
        )
        self.next_schedule_time = (
            "SELECT MIN(next_run_at) FROM schedules WHERE next_run_at IS NOT NULL AND status = 'active'"
        )
        self.delete_schedule = f"DELETE FROM schedules WHERE id = {m}"

        # workflow runs
        self.upsert_workflow_run = (
            f"INSERT INTO workflow_runs (id, workflow, status, created_at, data) VALUES ({_marks(d, 5)}) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data"
        )
        self.get_workflow_run = f"SELECT data FROM workflow_runs WHERE id = {m}"

        # checkpoints (issue 32): the key (session_id, step) refuses a step taken twice
        self.insert_checkpoint = (
            f"INSERT INTO checkpoints (session_id, step, workspace, created_at, data) VALUES ({_marks(d, 5)})"
        )
        self.next_checkpoint_step = f"SELECT COALESCE(MAX(step), 0) + 1 FROM checkpoints WHERE session_id = {m}"
        self.list_checkpoints = f"SELECT data FROM checkpoints WHERE session_id = {m} ORDER BY step"
        self.get_checkpoint = f"SELECT data FROM checkpoints WHERE session_id = {m} AND step = {m}"
        self.workspace_checkpoints = (
            f"SELECT data FROM checkpoints WHERE workspace = {m} ORDER BY created_at, {order}"
        )
        self.retained_checkpoints = (
            f"SELECT c.session_id, c.step, {d.field('c.data', 'commit')}, c.created_at < {m}, s.status IN ({_marks(d, len(ACTIVE_STATUSES))}) "
            f"FROM checkpoints c LEFT JOIN sessions s ON s.id = c.session_id "
            f"WHERE c.workspace = {m} ORDER BY c.created_at, c.{order}"
        )
        self.checkpoint_workspaces = "SELECT DISTINCT workspace FROM checkpoints"

        # tool pins (issue 34): the first writer of a (server, tool) pins it; an accept is a
        # compare-and-set on the fingerprint the admin saw replaced
        self.insert_tool_pin = (
            f"INSERT INTO tool_pins (server, tool, fingerprint, created_at, data) VALUES ({_marks(d, 5)}) "
            "ON CONFLICT (server, tool) DO NOTHING"
        )
        self.list_tool_pins = f"SELECT data FROM tool_pins WHERE server = {m} ORDER BY tool"
        self.replace_tool_pin = (
            f"UPDATE tool_pins SET fingerprint = {m}, data = {m} WHERE server = {m} AND tool = {m} AND fingerprint = {m}"
        )

        # gateway tasks (issue 35): one caller's tasks, newest first, a page at a time
        self.insert_gateway_task = (
            f"INSERT INTO gateway_tasks (id, owner, created_at, data) VALUES ({_marks(d, 4)})"
        )
        self.get_gateway_task = f"SELECT data FROM gateway_tasks WHERE id = {m}"
        self.list_gateway_tasks = (
            f"SELECT data FROM gateway_tasks WHERE owner = {m} ORDER BY created_at DESC, id LIMIT {m} OFFSET {m}"
        )
        self.save_gateway_task = f"UPDATE gateway_tasks SET data = {m} WHERE id = {m}"
        self.delete_gateway_task = f"DELETE FROM gateway_tasks WHERE id = {m}"


SQLITE_SQL = Statements(SQLITE)
POSTGRES_SQL = Statements(POSTGRES)
