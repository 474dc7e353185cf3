"""The audit log as a person reads it: rows with their session's title, and exports as CSV or JSON.

An export streams every row the filters match, newest first, a page at a time, so a long log
never sits in memory. Arguments come from the model and may hold anything: a CSV cell that a
spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or carriage return first) is
quoted with a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from backend.domain.models import AuditEntry
from backend.store.base import NotFound, Store
from backend.domain.audit import AuditQuery

ExportFormat = Literal["csv", "json"]
PAGE = 500
MAX_ROWS = 100_000
"""An export stops here (the newest rows); narrow the filters for older ones."""

CSV_COLUMNS = [
    "id",
    "created_at",
    "session_id",
    "session_title",
    "tool_name",
    "decision",
    "decided_by",
    "decider",
    "decider_kind",
    "via",
    "detail",
    "latency_ms",
    "tool_call_id",
    "arguments",
]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class SessionTitles:
    """Session titles by id, read once each; a deleted session's rows keep their id, with no title."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._titles: dict[str, str] = {}

    async def of(self, entries: list[AuditEntry]) -> dict[str, str]:
        for session_id in {e.session_id for e in entries} - self._titles.keys():
            try:
                self._titles[session_id] = (await self._store.get_session(session_id)).title
            except NotFound:
                self._titles[session_id] = ""
        return {e.session_id: self._titles[e.session_id] for e in entries}


def row_of(entry: AuditEntry, title: str) -> dict[str, Any]:
    """One exported row: the audit entry, flat, with its session's title."""
    return {
        "id": entry.id,
        "created_at": entry.created_at.isoformat(),
        "session_id": entry.session_id,
        "session_title": title,
        "tool_name": entry.tool_name,
        "decision": entry.decision,
        "decided_by": entry.decided_by,
        "decider": entry.decider.name,
        "decider_kind": entry.decider.kind,
        "via": entry.decider.via,
        "detail": entry.detail,
        "latency_ms": round(entry.latency_ms, 1),
        "tool_call_id": entry.tool_call_id,
        "arguments": entry.arguments,
    }


def _safe_cell(value: Any) -> Any:
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


async def _rows(store: Store, query: AuditQuery) -> AsyncIterator[dict[str, Any]]:
    titles = SessionTitles(store)
    for offset in range(0, MAX_ROWS, PAGE):
        entries = await store.list_audit(limit=min(PAGE, MAX_ROWS - offset), offset=offset, query=query)
        names = await titles.of(entries)
        for entry in entries:
            yield row_of(entry, names[entry.session_id])
        if len(entries) < PAGE:
            return


async def export(store: Store, query: AuditQuery, fmt: ExportFormat) -> AsyncIterator[str]:
    """The matching rows as CSV (a header, then a line each) or as one JSON array, in pieces."""
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
        writer.writeheader()
        async for row in _rows(store, query):
            writer.writerow({k: _safe_cell(v) for k, v in row.items()})
            if buffer.tell() > 64_000:
                yield _take(buffer)
        yield _take(buffer)
        return
    yield "["
    first = True
    async for row in _rows(store, query):
        yield ("" if first else ",") + "\n" + json.dumps(row, ensure_ascii=False)
        first = False
    yield "\n]\n"


@dataclass(kw_only=True)
class AuditPage:
    """One page of decisions, newest first, with the titles of their sessions by id."""

    entries: list[AuditEntry]
    titles: dict[str, str]


class AuditLog:
    """The permission decisions as people read them: pages, and exports."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def page(self, query: AuditQuery, *, limit: int, offset: int) -> AuditPage:
        entries = await self._store.list_audit(limit=limit, offset=offset, query=query)
        return AuditPage(entries=entries, titles=await SessionTitles(self._store).of(entries))

    def export(self, query: AuditQuery, fmt: ExportFormat) -> AsyncIterator[str]:
        """Every matching row as CSV or one JSON array, in pieces (see `export`)."""
        return export(self._store, query, fmt)


def _take(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text
