"""The filters of session search and the audit log, as SQL both stores share.

Rows keep their model as JSON in `data`; a filter reads fields out of it with the dialect's
own JSON accessor (`backend.store.dialect`), so a new filter needs no migration. A person's
search text is matched literally: `%`, `_` and `\\` are escaped, never wildcards.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backend.domain.audit import AuditQuery
from backend.store.dialect import Dialect

LIKE_ESCAPE = "\\"


def like_contains(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with its wildcards taken literally."""
    escaped = text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def like_prefix(text: str) -> str:
    """A LIKE pattern matching what starts with `text`, its wildcards taken literally."""
    return like_contains(text)[1:]


def where(clauses: list[str]) -> str:
    """The WHERE clause of all `clauses` together, or "" for none."""
    return f"WHERE {' AND '.join(clauses)}" if clauses else ""


def one_of(column: str, values: Iterable[str], d: Dialect) -> tuple[str, list[Any]]:
    """`column` is one of `values`: the condition and its parameters (none at all matches nothing)."""
    wanted = list(values)
    if not wanted:
        return "FALSE", []  # `IN ()` is an error in Postgres
    return f"{column} IN ({', '.join([d.mark] * len(wanted))})", wanted


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
    return where(clauses), params


def session_where(
    d: Dialect, *, statuses: list[str] | None, archived: bool | None, text: str | None
) -> tuple[str, list[Any]]:
    """The WHERE clause (or "") and parameters of a session list: by status, archived, and text
    found in the title or in what a person or the agent said (tool output is not searched)."""
    clauses: list[str] = []
    params: list[Any] = []
    if statuses is not None:
        clause, wanted = one_of("status", statuses, d)
        clauses.append(clause)
        params += wanted
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
    return where(clauses), params
