"""A Postgres database of a test's own on the machine's server, made fresh and dropped after.

The server is 127.0.0.1:5432 with trust auth; `OVERSEER_TEST_POSTGRES_URL` names another
maintenance database to create databases through. Used by the store tests and by the
multi-host cluster harness (`backend.testing.cluster`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

MAINTENANCE_URL = os.environ.get("OVERSEER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def _connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=5)


@contextmanager
def fresh_database(label: str) -> Iterator[str]:
    """The URL of a new, empty database named after `label`, dropped (connections and all) on exit."""
    name = f"overseer_{label[:30]}_{uuid.uuid4().hex[:10]}".lower()
    with _connect(MAINTENANCE_URL) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(name)
    finally:
        with _connect(MAINTENANCE_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def database_url(name: str) -> str:
    """The maintenance URL pointed at database `name`, still a `postgresql://` URL (DBOS takes only URLs)."""
    parts = urlsplit(MAINTENANCE_URL)
    if parts.scheme.startswith("postgres"):
        return urlunsplit(parts._replace(path=f"/{name}"))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(MAINTENANCE_URL, dbname=name)


def empty_schema(url: str) -> None:
    """Drop everything in the database's public schema: no tables, no schema version."""
    with _connect(url) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
