"""One store text (issue 30): both databases get their tables from `tables.py` and run the
statements of `statements.py`; neither store keeps a query of its own that the other repeats."""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

from backend.store import postgres_schema, schema
from backend.store.tables import AUDIT_SESSION, SESSIONS_CREATED, TABLES

STORE = Path(__file__).parents[2] / "backend" / "store"


def digests(migrations: list[str]) -> list[str]:
    return [hashlib.sha256(step.encode()).hexdigest()[:12] for step in migrations]


def test_released_migration_steps_render_as_they_were_released():
    # Databases in the field ran these very steps: a table changed in tables.py must not reach
    # them through an old step (new databases would differ from migrated ones). Append a step.
    sqlite_steps = ["87bfeaa7be45", "25e4bdf6daaf", "1daf0768c4b7", "4e190ab9c4b1", "2bbbb77e5334"]
    assert digests(schema.MIGRATIONS)[: len(sqlite_steps)] == sqlite_steps
    assert digests(postgres_schema.MIGRATIONS)[:2] == ["2f08437f0f5e", "06e911821b7f"]


async def test_both_databases_have_the_same_tables_columns_and_indexes(sqlite_store, postgres_store):
    names = [t.name for t in TABLES]
    in_sqlite = {}
    for t in names:
        in_sqlite[t] = {row[1] for row in await sqlite_store.db.fetch_all(f"PRAGMA table_info({t})")}
    rows = await postgres_store._fetch_all(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
    )
    in_postgres = {t: {c for table, c in rows if table == t and c != "ord"} for t in names}
    assert in_sqlite == in_postgres
    assert all(in_sqlite.values())

    sqlite_indexes = await sqlite_store.db.fetch_all(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'"
    )
    postgres_indexes = await postgres_store._fetch_all(
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'"
    )
    only_postgres = {r[0] for r in postgres_indexes if not r[0].endswith("_pkey")} - {r[0] for r in sqlite_indexes}
    assert only_postgres == {SESSIONS_CREATED.name, AUDIT_SESSION.name}


def sql_texts(path: Path) -> set[str]:
    """The SQL statements written in a module, in one spelling: `?` marks, `rowid` order, one space."""
    texts: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        text = " ".join(re.sub(r"\bord\b", "rowid", text.replace("%s", "?")).split())
        if re.match(r"(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH) ", text):
            texts.add(text)
    return texts


def test_no_statement_is_written_in_both_stores():
    sqlite = set().union(*(sql_texts(p) for p in STORE.glob("sqlite*.py")), sql_texts(STORE / "schema.py"))
    postgres = set().union(*(sql_texts(p) for p in STORE.glob("postgres*.py")))
    assert postgres, "the scan found no SQL in the Postgres store: it no longer reads what it checks"
    assert sqlite & postgres == set()
