"""Settings → Audit log in real Chromium: session titles, who decided, human durations, filters,
and an export that holds exactly the filtered rows."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from playwright.sync_api import expect

from backend.domain.session_options import SessionOptions
from backend.domain.models import AuditEntry, Decider, utcnow


def seed(h) -> str:
    session = h.call(h.host.runner.create(options=SessionOptions(title="Audit me")))
    now = utcnow()
    for i, (tool, decision, by, decider) in enumerate(
        [
            ("mcp__shell__exec", "allow", "user", Decider(name="ann", kind="user", via="auto")),
            ("mcp__file__write_file", "deny", "rule", Decider(name="overseer", kind="system")),
        ]
    ):
        entry = AuditEntry(
            session_id=session.id,
            tool_call_id=f"c{i}",
            tool_name=tool,
            arguments={"n": i},
            decision=decision,  # type: ignore[arg-type]
            decided_by=by,  # type: ignore[arg-type]
            decider=decider,
            latency_ms=1500,
            created_at=now - timedelta(minutes=5 - i),
        )
        h.call(h.host.store.add_audit(entry))
    return session.id


def test_the_log_names_sessions_and_people_filters_and_exports_what_it_shows(serve, new_page):
    h = serve([])
    seed(h)
    page = new_page(h, path="#/settings")
    rows = page.get_by_test_id("audit-row")
    expect(rows).to_have_count(2)
    expect(rows.first.get_by_test_id("audit-session")).to_have_text("Audit me")
    expect(rows.last.get_by_test_id("audit-by")).to_contain_text("auto-approved by ann")
    expect(rows.last).to_contain_text("1.5 s")
    # Tools as the session's cards name them (the servers' titles), the internal name on hover.
    expect(page.get_by_test_id("audit-tool")).to_contain_text(["Write a file", "Run a command"])
    expect(rows.first).not_to_contain_text("mcp__file__write_file")
    expect(rows.first.get_by_test_id("audit-tool")).to_have_attribute("title", "mcp__file__write_file")

    page.get_by_test_id("audit-filter-decision").select_option("deny")
    page.get_by_test_id("audit-apply").click()
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_test_id("audit-tool")).to_contain_text("Write a file")

    with page.expect_download() as download:
        page.get_by_test_id("audit-export-csv").click()
    exported = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert [(r["tool_name"], r["decision"], r["session_title"]) for r in exported] == [
        ("mcp__file__write_file", "deny", "Audit me")
    ]

    page.get_by_test_id("audit-filter-who").fill("nobody")
    page.get_by_test_id("audit-apply").click()
    expect(page.get_by_test_id("audit-section")).to_contain_text("No decision matches these filters.")
    page.get_by_test_id("audit-clear").click()
    expect(rows).to_have_count(2)
