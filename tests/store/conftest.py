"""Every store test runs on both stores: SQLite (a file in tmp_path) and Postgres.

Postgres is the machine's server (127.0.0.1:5432, trust auth; `OVERSEER_TEST_POSTGRES_URL`
names another maintenance database). Each test module gets a database of its own, created
through the maintenance database and dropped after; each test starts on an empty schema. Without
psycopg or the server, the Postgres half fails: never skipped, or CI would pass on SQLite alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from backend.store.base import Store
from backend.store.sqlite import SqliteStore
from backend.testing.postgres import empty_schema, fresh_database

if TYPE_CHECKING:
    from backend.store.postgres import PostgresStore

StoreFactory = Callable[[], Store]


@pytest.fixture(scope="module")
def postgres_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a database made for this test module alone (dropped at its end)."""
    with fresh_database(request.module.__name__.rsplit(".", 1)[-1]) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes unopened stores on one database; two of them stand for two processes."""
    if request.param == "sqlite":
        return lambda: SqliteStore(tmp_path / "o.db")
    from backend.store.postgres import PostgresStore

    url: str = request.getfixturevalue("postgres_database")
    empty_schema(url)
    # Small pools: a test opens several stores, and the server's connections are shared.
    return lambda: PostgresStore(url, max_connections=4)


@pytest.fixture
async def store(store_factory: StoreFactory) -> AsyncIterator[Store]:
    s = store_factory()
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    """For what only SQLite has (PRAGMAs, its query planner, triggers in its dialect)."""
    async with SqliteStore(tmp_path / "o.db") as s:
        yield s


@pytest.fixture
def empty_postgres_database(postgres_database: str) -> str:
    """The module's database with nothing in it: no tables, no schema version."""
    empty_schema(postgres_database)
    return postgres_database


@pytest.fixture
async def postgres_store(empty_postgres_database: str) -> AsyncIterator[PostgresStore]:
    """For what only Postgres has (its catalog, triggers in its dialect)."""
    from backend.store.postgres import PostgresStore

    async with PostgresStore(empty_postgres_database, max_connections=4) as s:
        yield s
