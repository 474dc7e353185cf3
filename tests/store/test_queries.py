"""Session search and audit filters, on SQLite and on Postgres (tests/store/conftest.py)."""

from __future__ import annotations

from datetime import timedelta

from backend.domain.models import AuditEntry, Decider, Message, Session, utcnow
from backend.domain.audit import AuditQuery
from backend.store.queries import like_contains


def session(sid: str, title: str = "", *, archived: bool = False, status: str = "completed") -> Session:
    return Session(id=sid, workspace="/w", title=title, archived=archived, status=status)  # type: ignore[arg-type]


async def ids(store, **filters) -> set[str]:
    return {s.id for s in await store.list_sessions(**filters)}


def test_search_text_is_taken_literally():
    assert like_contains("50%_off\\") == "%50\\%\\_off\\\\%"


async def test_archived_sessions_are_listed_only_when_asked_for(store):
    await store.create_session(session("kept"))
    await store.create_session(session("old", archived=True))
    assert await ids(store) == {"kept", "old"}
    assert await ids(store, archived=False) == {"kept"}
    assert await ids(store, archived=True) == {"old"}
    assert await ids(store, archived=False, statuses=["running"]) == set()


async def test_search_finds_the_title_and_what_was_said_but_not_tool_output(store):
    await store.create_session(session("titled", "Fix the Login page"))
    await store.create_session(session("said", "other"))
    await store.create_session(session("tool", "other"))
    await store.add_message(Message(session_id="said", role="user", content="please look at LOGIN errors"))
    await store.add_message(Message(session_id="said", role="assistant", content="done"))
    await store.add_message(Message(session_id="tool", role="tool", content="login.py changed"))
    assert await ids(store, text="login") == {"titled", "said"}
    assert await ids(store, text="errors", archived=False) == {"said"}
    assert await ids(store, text="nowhere") == set()


async def test_wildcards_in_the_search_text_match_only_themselves(store):
    await store.create_session(session("percent", "save 50% now"))
    await store.create_session(session("plain", "save 500 now"))
    await store.create_session(session("underscore", "a_b"))
    await store.create_session(session("letter", "axb"))
    assert await ids(store, text="50%") == {"percent"}
    assert await ids(store, text="a_b") == {"underscore"}
    assert await ids(store, text="%") == {"percent"}


def audit(sid: str, tool: str, decision: str, by: str, who: str = "overseer", minutes_ago: int = 0) -> AuditEntry:
    return AuditEntry(
        session_id=sid,
        tool_call_id=f"{sid}-{tool}-{minutes_ago}",
        tool_name=tool,
        decision=decision,  # type: ignore[arg-type]
        decided_by=by,  # type: ignore[arg-type]
        decider=Decider(name=who, kind="user" if who != "overseer" else "system"),
        created_at=utcnow() - timedelta(minutes=minutes_ago),
    )


async def test_the_audit_log_filters_by_tool_server_decision_decider_who_session_and_time(store):
    rows = [
        audit("s1", "mcp__shell__exec", "allow", "user", "ann", minutes_ago=30),
        audit("s1", "mcp__shell__exec", "deny", "rule", minutes_ago=20),
        audit("s2", "mcp__file__write_file", "allow", "user", "bob", minutes_ago=10),
        audit("s2", "mcp__shellx__run", "deny", "timeout", minutes_ago=5),
    ]
    for row in rows:
        await store.add_audit(row)

    async def tools(**filters) -> list[str]:
        return [f"{e.tool_name}:{e.decision}" for e in await store.list_audit(query=AuditQuery(**filters))]

    assert await tools(tool="mcp__shell") == ["mcp__shell__exec:deny", "mcp__shell__exec:allow"]  # not mcp__shellx
    assert await tools(tool="mcp__shell__exec", decision="allow") == ["mcp__shell__exec:allow"]
    assert await tools(decided_by="timeout") == ["mcp__shellx__run:deny"]
    assert await tools(who="bob") == ["mcp__file__write_file:allow"]
    assert await tools(session_id="s2", decision="deny") == ["mcp__shellx__run:deny"]
    now = utcnow()
    assert await tools(since=now - timedelta(minutes=25), until=now - timedelta(minutes=7)) == [
        "mcp__file__write_file:allow",
        "mcp__shell__exec:deny",
    ]
    assert await tools(tool="mcp_%") == []  # a wildcard is only itself
    assert len(await store.list_audit(session_id="s1", query=AuditQuery(decision="deny"))) == 1
