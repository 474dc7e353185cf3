"""The Store's methods written once, in SQL both databases run: sessions and their transcript.

SqliteStore and PostgresStore supply the seam (`SqlSeam`) and keep what only they have (opening
and migrating, `change_session`'s locking, `_unit`, `close_approval`, `data_version`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable

from backend.domain.models import Event, Message, Session, ToolCallRecord
from backend.store.base import NotFound, Written
from backend.store.queries import one_of, session_where, where
from backend.store.ready import then
from backend.store.sql_approvals import SqlApprovals
from backend.store.sql_checkpoints import SqlCheckpoints
from backend.store.sql_gateway_tasks import SqlGatewayTasks
from backend.store.sql_schedules import SqlSchedules
from backend.store.sql_tool_pins import SqlToolPins
from backend.store.sql_workflows import SqlWorkflows


class SqlStore(SqlApprovals, SqlSchedules, SqlWorkflows, SqlCheckpoints, SqlToolPins, SqlGatewayTasks):
    """Sessions, messages, tool calls and events; approvals, the audit log, schedules, workflow
    runs, checkpoints, tool pins and gateway tasks come from the mixins. A subclass supplies the seam."""

    # sessions

    async def create_session(self, session: Session) -> Session:
        when = self.sql.dialect.time(session.created_at)
        row = (session.id, session.status, session.parent_id, when, session.model_dump_json())
        await self._execute(self.sql.insert_session, row)
        return session

    async def get_session(self, session_id: str) -> Session:
        rows = await self._fetch_all(self.sql.get_session, (session_id,))
        if not rows:
            raise NotFound(f"no session {session_id!r}")
        return Session.model_validate_json(rows[0][0])

    async def save_session(self, session: Session) -> Session:
        changes = (session.status, session.model_dump_json(), session.id)
        if await self._execute(self.sql.update_session, changes) == 0:
            raise NotFound(f"no session {session.id!r}")
        return session

    async def list_sessions(
        self,
        *,
        statuses: Iterable[str] | None = None,
        limit: int = 200,
        archived: bool | None = None,
        text: str | None = None,
    ) -> list[Session]:
        d = self.sql.dialect
        clause, params = session_where(
            d, statuses=None if statuses is None else list(statuses), archived=archived, text=text
        )
        rows = await self._fetch_all(
            f"SELECT data FROM sessions {clause} ORDER BY created_at DESC, {d.order} DESC LIMIT {d.mark}",
            (*params, limit),
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def list_children(self, parent_id: str, *, statuses: Iterable[str] | None = None) -> list[Session]:
        d = self.sql.dialect
        clauses, params = [f"parent_id = {d.mark}"], [parent_id]
        if statuses is not None:
            clause, wanted = one_of("status", statuses, d)
            clauses.append(clause)
            params += wanted
        rows = await self._fetch_all(
            f"SELECT data FROM sessions {where(clauses)} ORDER BY created_at, {d.order}", tuple(params)
        )
        return [Session.model_validate_json(r[0]) for r in rows]

    async def delete_session(self, session_id: str) -> None:
        key = (session_id,)
        deleted = await self._execute_all(
            [*((sql, key) for sql in self.sql.delete_session_rows), (self.sql.delete_session, key)]
        )
        if deleted[-1] == 0:
            raise NotFound(f"no session {session_id!r}")

    # messages and tool calls

    def add_message(self, message: Message) -> Awaitable[Message]:
        return then(self._unit(message=message), _stored_message)

    async def list_messages(self, session_id: str) -> list[Message]:
        rows = await self._fetch_all(self.sql.list_messages, (session_id,))
        return [Message.model_validate_json(r[0]) for r in rows]

    async def save_tool_call(self, record: ToolCallRecord) -> None:
        await self._execute(*self._call_write(record))

    def finish_tool_call(
        self, record: ToolCallRecord, result: Message, *, event: Event | None = None
    ) -> Awaitable[Written]:
        return self._unit([self._call_write(record)], message=result, event=event)

    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        rows = await self._fetch_all(self.sql.list_calls, (session_id,))
        return [ToolCallRecord.model_validate_json(r[0]) for r in rows]

    # events

    def append_event(self, event: Event) -> Awaitable[Event]:
        return then(self._unit(event=event), _stored_event)

    async def last_seq(self, session_id: str) -> int:
        rows = await self._fetch_all(self.sql.last_seq, (session_id,))
        return int(rows[0][0])

    async def list_events(self, session_id: str, *, since: int = 0, limit: int = 10_000) -> list[Event]:
        rows = await self._fetch_all(self.sql.list_events, (session_id, since, limit))
        return [Event.model_validate_json(r[0]) for r in rows]


def _stored_message(written: Written) -> Message:
    assert written.message is not None
    return written.message


def _stored_event(written: Written) -> Event:
    assert written.event is not None
    return written.event
