"""Workflow runs in the store (SQLite and Postgres): round trips, newest-first lists and their filters, migration."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from backend.store import NotFound, SqliteStore
from backend.store.schema import MIGRATIONS, SCHEMA_VERSION
from backend.domain.workflows import StepRun, WorkflowRun

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def run(run_id: str, *, workflow: str = "plan-then-build", status: str = "running", created: int = 0) -> WorkflowRun:
    return WorkflowRun(
        id=run_id,
        workflow=workflow,
        input="do it",
        status=status,  # type: ignore[arg-type]
        steps=[StepRun(index=0, mode="plan", template="{{input}}", approve=True), StepRun(index=1, mode="agent", template="{{previous}}")],
        created_at=T0 + timedelta(seconds=created),
    )


async def test_a_run_round_trips_and_saving_again_replaces_it(store):
    saved = await store.save_workflow_run(run("a"))
    assert await store.get_workflow_run("a") == saved
    done = saved.model_copy(update={"status": "completed", "current": 1})
    await store.save_workflow_run(done)
    assert await store.get_workflow_run("a") == done
    assert len(await store.list_workflow_runs()) == 1


async def test_an_unknown_run_is_not_found(store):
    with pytest.raises(NotFound):
        await store.get_workflow_run("missing")


async def test_runs_are_listed_newest_first_and_filter_by_workflow_status_and_limit(store):
    await store.save_workflow_run(run("old", created=0, status="completed"))
    await store.save_workflow_run(run("mid", created=1, workflow="research-then-write"))
    await store.save_workflow_run(run("new", created=2, status="waiting_approval"))
    assert [r.id for r in await store.list_workflow_runs()] == ["new", "mid", "old"]
    assert [r.id for r in await store.list_workflow_runs(workflow="plan-then-build")] == ["new", "old"]
    assert [r.id for r in await store.list_workflow_runs(statuses=["running", "waiting_approval"])] == ["new", "mid"]
    assert [r.id for r in await store.list_workflow_runs(limit=1)] == ["new"]


async def test_a_database_from_before_workflows_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(f"BEGIN;\n{MIGRATIONS[0]}\n{MIGRATIONS[1]}\nPRAGMA user_version = 2;\nCOMMIT;")
    conn.close()
    async with SqliteStore(path) as store:
        assert await store.schema_version() == SCHEMA_VERSION
        await store.save_workflow_run(run("new"))
        assert [r.id for r in await store.list_workflow_runs()] == ["new"]
