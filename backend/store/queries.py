"""The filters of session search and the audit log, as SQL both stores share.

Rows keep their model as JSON in `data`; a filter reads fields out of it with the dialect's
own JSON accessor (`Dialect`), so a new filter needs no migration. A person's search text is
matched literally: `%`, `_` and `\\` are escaped, never wildcards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from backend.domain.models import DecidedBy

LIKE_ESCAPE = "\\"


def like_contains(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with its wildcards taken literally."""
    escaped = text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def like_prefix(text: str) -> str:
    """A LIKE pattern matching what starts with `text`, its wildcards taken literally."""
    return like_contains(text)[1:]


@dataclass(kw_only=True, frozen=True)
class Dialect:
    """How one database spells what the filters need."""

    mark: str
    """The parameter placeholder (`?`, `%s`)."""
    field: Callable[[str, str], str]
    """The SQL text of a JSON field: (column, dotted path) -> expression giving text."""
    like: str
    """The case-insensitive LIKE (SQLite's LIKE is, for ASCII; Postgres needs ILIKE)."""
    time: Callable[[datetime], Any]
    """A timestamp as the `created_at` column compares it."""
    true: str
    """What a JSON `true` reads as through `field` (SQLite gives 1, Postgres the text 'true')."""


@dataclass(kw_only=True, frozen=True)
class AuditQuery:
    """Which audit rows to list; every field left None matches all."""

    session_id: str | None = None
    tool: str | None = None
    """A tool's full name (`mcp__shell__exec`), or a server's prefix (`mcp__shell`) for all its tools."""
    decision: Literal["allow", "deny"] | None = None
    decided_by: DecidedBy | None = None
    who: str | None = None
    """The decider's name: a person, an API key, or `overseer` for rules, policies and timeouts."""
    since: datetime | None = None
    until: datetime | None = None
    """Rows created at or after `since` and before `until`."""


def audit_where(query: AuditQuery, d: Dialect) -> tuple[str, list[Any]]:
    """The WHERE clause (or "") and its parameters for `query`."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.session_id is not None:
        clauses.append(f"session_id = {d.mark}")
        params.append(query.session_id)
    if query.tool is not None:
        name = d.field("data", "tool_name")
        clauses.append(f"({name} = {d.mark} OR {name} LIKE {d.mark} ESCAPE '{LIKE_ESCAPE}')")
        params += [query.tool, like_prefix(query.tool + "__") + "%"]
    for path, value in (("decision", query.decision), ("decided_by", query.decided_by), ("decider.name", query.who)):
        if value is not None:
            clauses.append(f"{d.field('data', path)} = {d.mark}")
            params.append(value)
    if query.since is not None:
        clauses.append(f"created_at >= {d.mark}")
        params.append(d.time(query.since))
    if query.until is not None:
        clauses.append(f"created_at < {d.mark}")
        params.append(d.time(query.until))
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def session_where(
    d: Dialect, *, statuses: list[str] | None, archived: bool | None, text: str | None
) -> tuple[str, list[Any]]:
    """The WHERE clause (or "") and parameters of a session list: by status, archived, and text
    found in the title or in what a person or the agent said (tool output is not searched)."""
    clauses: list[str] = []
    params: list[Any] = []
    if statuses is not None:
        clauses.append(f"status IN ({', '.join([d.mark] * len(statuses))})" if statuses else "FALSE")
        params += statuses
    if archived is not None:
        flag = d.field("data", "archived")
        clauses.append(f"COALESCE({flag} = {d.true}, FALSE) = {'TRUE' if archived else 'FALSE'}")
    if text:
        pattern = like_contains(text)
        said = (
            f"SELECT 1 FROM messages m WHERE m.session_id = sessions.id"
            f" AND {d.field('m.data', 'role')} IN ('user', 'assistant')"
            f" AND {d.field('m.data', 'content')} {d.like} {d.mark} ESCAPE '{LIKE_ESCAPE}'"
        )
        clauses.append(f"({d.field('data', 'title')} {d.like} {d.mark} ESCAPE '{LIKE_ESCAPE}' OR EXISTS ({said}))")
        params += [pattern, pattern]
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def _sqlite_field(column: str, path: str) -> str:
    return f"json_extract({column}, '$.{path}')"


def _postgres_field(column: str, path: str) -> str:
    return f"({column}::jsonb #>> '{{{','.join(path.split('.'))}}}')"


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


SQLITE = Dialect(mark="?", field=_sqlite_field, like="LIKE", time=lambda t: _utc(t).isoformat(), true="1")
POSTGRES = Dialect(mark="%s", field=_postgres_field, like="ILIKE", time=_utc, true="'true'")
