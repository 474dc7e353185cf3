"""Gateway tasks (issue 35, item 6): `invoke_agent` runs an MCP client started as tasks, bound
to the caller who started them.

A task is a handle on an agent session (durable already); this service keeps who it belongs to
and how long it is kept. Another caller asking for it, or anyone asking once it ended and its time to
live ran out, gets NotFound, as for an id that never existed: a task's existence is not told to
others.
Ids are random (192 bits), so they cannot be guessed either.
"""

from __future__ import annotations

import secrets

from backend.auth import Principal
from backend.domain.errors import NotFound
from backend.domain.gateway_tasks import GatewayTask
from backend.domain.models import utcnow
from backend.store.base import Store


def owner_of(principal: Principal) -> str:
    """The key a task is bound to: how the caller authenticated and as whom."""
    return f"{principal.kind}:{principal.name}"


class GatewayTaskService:
    """Create, find and update the tasks of one caller."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def create(self, *, session_id: str, owner: Principal, ttl_ms: int) -> GatewayTask:
        """A new task following `session_id`, belonging to `owner`, stored before it is returned."""
        task = GatewayTask(id=secrets.token_urlsafe(24), session_id=session_id, owner=owner_of(owner), ttl_ms=ttl_ms)
        return await self._store.add_gateway_task(task)

    async def get(self, task_id: str, *, owner: Principal) -> GatewayTask:
        """The caller's task; NotFound when there is none of theirs by this id (or it expired)."""
        task = await self._store.gateway_task(task_id)
        if task is not None and task.expired():
            await self._store.delete_gateway_task(task.id)
            task = None
        if task is None or task.owner != owner_of(owner):
            raise NotFound(f"no task {task_id!r}")
        return task

    async def reload(self, task: GatewayTask) -> GatewayTask:
        """The task as stored now (a cancel may have changed it); NotFound once it is gone."""
        found = await self._store.gateway_task(task.id)
        if found is None:
            raise NotFound(f"no task {task.id!r}")
        return found

    async def list(self, *, owner: Principal, limit: int, offset: int = 0) -> list[GatewayTask]:
        """The caller's live tasks, newest first, a page of them."""
        found = await self._store.gateway_tasks(owner_of(owner), limit=limit, offset=offset)
        return [t for t in found if not t.expired()]

    async def save(self, task: GatewayTask) -> GatewayTask:
        """Write a changed task (cancel requested, how it ended), stamped as updated now."""
        return await self._store.save_gateway_task(task.model_copy(update={"updated_at": utcnow()}))
