"""Gateway tasks' rows (issue 35, item 6), written once for both databases; mixed into SqlStore.

A task's row names its owner and its session; the rest (cancel requested, how it ended and the
result) is in its JSON, saved whole: the gateway writes it, one task at a time.
"""

from __future__ import annotations

from backend.domain.gateway_tasks import GatewayTask
from backend.store.sql_seam import SqlSeam


class SqlGatewayTasks(SqlSeam):
    """Add, read, list, save and delete gateway tasks."""

    async def add_gateway_task(self, task: GatewayTask) -> GatewayTask:
        """Store a new task."""
        row = (task.id, task.owner, self.sql.dialect.time(task.created_at), task.model_dump_json())
        await self._execute(self.sql.insert_gateway_task, row)
        return task

    async def gateway_task(self, task_id: str) -> GatewayTask | None:
        """The task of this id, if there is one."""
        rows = await self._fetch_all(self.sql.get_gateway_task, (task_id,))
        return GatewayTask.model_validate_json(rows[0][0]) if rows else None

    async def gateway_tasks(self, owner: str, *, limit: int, offset: int = 0) -> list[GatewayTask]:
        """`owner`'s tasks, newest first, `limit` of them after the first `offset`."""
        rows = await self._fetch_all(self.sql.list_gateway_tasks, (owner, limit, offset))
        return [GatewayTask.model_validate_json(r[0]) for r in rows]

    async def save_gateway_task(self, task: GatewayTask) -> GatewayTask:
        """Write the task's JSON over the stored one (its id, owner and creation never change)."""
        await self._execute(self.sql.save_gateway_task, (task.model_dump_json(), task.id))
        return task

    async def delete_gateway_task(self, task_id: str) -> None:
        """Forget the task (its time to live ran out); its session stays."""
        await self._execute(self.sql.delete_gateway_task, (task_id,))
