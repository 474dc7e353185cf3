"""The search index: SQLite FTS5 over both memory files, kept in step with them before each search.

The index lives at `<workspace>/.overseer/memory-index.sqlite`. It is only a cache of the
files: each search compares every file's content digest with the one its rows were built from
and rebuilds that file's rows when they differ, so a fact a person added by hand is found the
next time. A digest (not mtime and size) decides, because two writes within one filesystem
timestamp tick can leave both unchanged. An index that cannot be opened is deleted and rebuilt.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from shared.memory_files import (
    HISTORY_FILE,
    MEMORY_FILE,
    Entry,
    history_path,
    memory_entries,
    memory_path,
    parse_history,
    read_text,
)

INDEX_FILE = ".overseer/memory-index.sqlite"
SCHEMA_VERSION = 1
MAX_QUERY_TERMS = 32

# Column weights for bm25(): entry_id and file are not searched; a word in the text counts
# twice as much as one in the section heading.
_BM25 = "bm25(entries, 0.0, 0.0, 0.5, 1.0)"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (file TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS entries USING fts5(
    entry_id UNINDEXED, file UNINDEXED, section, text, tokenize = 'porter unicode61'
);
"""

_SOURCES: dict[str, tuple[Callable[[Path], Path], Callable[[str], list[Entry]]]] = {
    MEMORY_FILE: (memory_path, memory_entries),
    HISTORY_FILE: (history_path, parse_history),
}


@dataclass(kw_only=True, frozen=True)
class Hit:
    """One search result, best first; a lower `score` is a better match (FTS5's bm25 sign)."""

    entry: Entry
    score: float


def fts_query(query: str) -> str:
    """The query as an FTS5 expression that cannot be a syntax error.

    Every whitespace-separated term is quoted (inner quotes doubled), so operators, column
    filters and stray punctuation are matched as plain words; terms are OR-ed and bm25 ranks
    entries matching more of them, and rarer ones, first. ValueError for a query without terms.
    """
    terms = query.split()[:MAX_QUERY_TERMS]
    if not terms:
        raise ValueError("the query is empty; give a few words to look for")
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def search(workspace: Path, query: str, limit: int) -> list[Hit]:
    """Entries of both memory files matching `query`, ranked by BM25, at most `limit`."""
    expression = fts_query(query)
    with _open(workspace) as db:
        sync(db, workspace)
        rows = db.execute(
            f"SELECT entry_id, file, section, text, {_BM25} AS score FROM entries "
            "WHERE entries MATCH ? ORDER BY score LIMIT ?",
            (expression, limit),
        ).fetchall()
    return [
        Hit(entry=Entry(id=row[0], file=row[1], section=row[2], text=row[3]), score=row[4]) for row in rows
    ]


def sync(db: sqlite3.Connection, workspace: Path) -> list[str]:
    """Rebuild the rows of every file whose content changed since it was indexed; returns their names."""
    rebuilt = []
    with db:  # one transaction: a concurrent search sees the old rows or the new, never a mix
        db.execute("BEGIN IMMEDIATE")
        known = dict(db.execute("SELECT file, digest FROM sources").fetchall())
        for name, (path_of, parse) in _SOURCES.items():
            text = read_text(path_of(workspace))
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if known.get(name) == digest:
                continue
            db.execute("DELETE FROM entries WHERE file = ?", (name,))
            db.executemany(
                "INSERT INTO entries (entry_id, file, section, text) VALUES (?, ?, ?, ?)",
                [(e.id, e.file, e.section, e.text) for e in parse(text)],
            )
            db.execute("INSERT OR REPLACE INTO sources (file, digest) VALUES (?, ?)", (name, digest))
            rebuilt.append(name)
    return rebuilt


@contextmanager
def _open(workspace: Path) -> Iterator[sqlite3.Connection]:
    path = workspace / INDEX_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = _connect(path)
    except sqlite3.DatabaseError:
        # Only a cache: a corrupt or foreign file is replaced rather than reported.
        path.unlink(missing_ok=True)
        db = _connect(path)
    with closing(db):
        yield db


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            db.executescript("DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS sources;")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db
