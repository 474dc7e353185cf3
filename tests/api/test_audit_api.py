"""GET /api/audit: filters, session titles, and exports as CSV and JSON (backend/app/audit.py)."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import AuditEntry, Decider, utcnow

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)


async def seeded(api) -> str:
    """A session titled "Audit me" and four decisions in it."""
    session = await api.host.runner.create(options=SessionOptions(title="Audit me"))
    now = utcnow()
    rows = [
        ("mcp__shell__exec", {"command": "=cmd|' /C calc'!A0"}, "allow", "user", Decider(name="ann", kind="user", via="rest"), 40),
        ("mcp__shell__exec", {"command": "rm -rf /"}, "deny", "rule", Decider(name="overseer", kind="system"), 30),
        ("mcp__file__write_file", {"path": "a.txt", "content": "ü"}, "allow", "user", Decider(name="bob", kind="api_key", via="auto"), 20),
        ("mcp__file__read_file", {"path": "a.txt"}, "deny", "timeout", Decider(name="overseer", kind="system"), 10),
    ]
    for i, (tool, args, decision, by, decider, minutes) in enumerate(rows):
        await api.host.store.add_audit(
            AuditEntry(
                session_id=session.id,
                tool_call_id=f"call{i}",
                tool_name=tool,
                arguments=args,
                decision=decision,  # type: ignore[arg-type]
                decided_by=by,  # type: ignore[arg-type]
                decider=decider,
                detail="allow_once" if decision == "allow" else "denied",
                latency_ms=1234.5,
                created_at=now - timedelta(minutes=minutes),
            )
        )
    return session.id


async def page(api, **params) -> dict:
    response = await api.client.get("/api/audit", params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_log_filters_by_tool_decision_decider_who_and_time_and_names_sessions(api):
    session_id = await seeded(api)
    mine = {"session_id": session_id}
    tools = lambda body: [(i["tool_name"], i["decision"]) for i in body["items"]]  # noqa: E731
    assert tools(await page(api, **mine, tool="mcp__shell")) == [("mcp__shell__exec", "deny"), ("mcp__shell__exec", "allow")]
    assert tools(await page(api, **mine, decision="deny", decided_by="timeout")) == [("mcp__file__read_file", "deny")]
    assert tools(await page(api, **mine, who="bob")) == [("mcp__file__write_file", "allow")]
    now = utcnow()
    window = {"since": (now - timedelta(minutes=35)).isoformat(), "until": (now - timedelta(minutes=15)).isoformat()}
    assert tools(await page(api, **mine, **window)) == [("mcp__file__write_file", "allow"), ("mcp__shell__exec", "deny")]
    body = await page(api, **mine, limit=1)
    assert body["sessions"] == {session_id: "Audit me"}


async def test_bad_filters_are_422(api):
    now = utcnow()
    for params in (
        {"decision": "maybe"},
        {"decided_by": "god"},
        {"since": now.isoformat(), "until": (now - timedelta(hours=1)).isoformat()},
        {"since": "yesterday"},
        {"format": "xml"},
        {"who": "ann\x00"},  # no store compares NUL (Postgres refuses it outright)
    ):
        response = await api.client.get("/api/audit", params=params)
        assert response.status_code == 422, (params, response.text)


async def test_csv_export_has_every_matching_row_with_titles_and_no_live_formulas(api):
    session_id = await seeded(api)
    response = await api.client.get("/api/audit", params={"session_id": session_id, "format": "csv", "limit": 1})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].startswith('attachment; filename="overseer-audit-')
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 4  # an export ignores the page size
    assert {r["session_title"] for r in rows} == {"Audit me"}
    assert [r["decider"] for r in rows] == ["overseer", "bob", "overseer", "ann"]
    assert rows[1]["via"] == "auto" and json.loads(rows[1]["arguments"]) == {"content": "ü", "path": "a.txt"}
    assert rows[3]["arguments"].startswith('{"command": "=cmd')  # JSON text: not a formula
    assert all(not r[k].startswith(("=", "+", "@")) for r in rows for k in r)


async def test_json_export_is_one_array_of_the_filtered_rows(api):
    session_id = await seeded(api)
    response = await api.client.get("/api/audit", params={"session_id": session_id, "decision": "deny", "format": "json"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    rows = response.json()
    assert [(r["tool_name"], r["decided_by"], r["session_title"]) for r in rows] == [
        ("mcp__file__read_file", "timeout", "Audit me"),
        ("mcp__shell__exec", "rule", "Audit me"),
    ]
    assert rows[1]["arguments"] == {"command": "rm -rf /"}


async def test_a_viewer_reads_and_exports_the_log(api):
    session_id = await seeded(api)
    viewer = {"X-API-Key": api.app.state.auth.create_api_key("auditor", role="viewer")}
    response = await api.anonymous.get("/api/audit", params={"session_id": session_id, "format": "json"}, headers=viewer)
    assert response.status_code == 200 and len(response.json()) == 4


async def test_a_time_bound_that_is_a_number_is_422_not_read_as_seconds_since_1970(api):
    for params in ({"until": "0.5"}, {"since": "1700000000"}, {"since": "-1", "until": "2"}):
        response = await api.client.get("/api/audit", params=params)
        assert response.status_code == 422, (params, response.text)
        assert "is a number, not a time" in response.json()["detail"]
