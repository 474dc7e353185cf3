"""A Postgres database of a test's own, made fresh and dropped after.

Databases are created through the maintenance database `OVERSEER_TEST_POSTGRES_URL` names
(default: the machine's server, 127.0.0.1:5432, trust auth). `make test` runs the suite through
`scripts/with_postgres.py`, which sets it to a private server for the run when nothing answers
there. Used by the store tests, the multi-host cluster harness (`backend.testing.cluster`) and the
Postgres benches; the one variable is the only place a test's server is named.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

URL_VARIABLE = "OVERSEER_TEST_POSTGRES_URL"
MAINTENANCE_URL = os.environ.get(URL_VARIABLE) or "postgresql://postgres@127.0.0.1:5432/postgres"


def _connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        error.add_note(
            f"The tests need PostgreSQL at {URL_VARIABLE} (now {MAINTENANCE_URL}): `make test` starts"
            " one for the run; run pytest through `scripts/with_postgres.py` to get one too."
        )
        raise


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
