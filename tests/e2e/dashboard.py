"""Helpers the browser tests share: scripted tool calls, a look into the store, page locators."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, Request

from backend.auth import Principal
from backend.domain.models import ACTIVE_STATUSES, Approval, AuditEntry, Session, ToolCallRecord
from backend.domain.session_options import SessionOptions
from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from backend.testing.web import WebHarness

SHELL = "mcp__shell__exec"
WRITE = "mcp__file__write_file"
EDIT = "mcp__file__edit_file"
LIST = "mcp__file__list_dir"
FETCH = "mcp__web__fetch"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
FETCH_SERVER = {
    "web": McpServerConfig(command=sys.executable, args=[str(Path(__file__).with_name("fetch_server.py"))])
}


def shell(command: str, id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name=SHELL, arguments={"command": command}, id=id)


def calls(*tool_calls: ScriptedToolCall, text: str = "") -> Reply:
    """One model turn making these tool calls (run concurrently by the engine)."""
    return Reply(text=text, tool_calls=list(tool_calls))


DASHBOARD_PERSON = Principal(name="admin", role="admin", kind="token").decider("rest")
"""Who the dashboard's pages are signed in as (the token), and so who starts sessions from it."""


def start_session(
    h: WebHarness, prompt: str = "Do the scripted work", options: SessionOptions | None = None
) -> Session:
    """A session started as the signed-in person would start it (its first message theirs)."""
    options = options or SessionOptions()
    if options.created_by is None:
        options = replace(options, created_by=DASHBOARD_PERSON)
    return h.call(h.host.runner.create(options=options, prompt=prompt))


def wait_session(h: WebHarness, session_id: str, timeout: float = 30) -> Session:
    return h.call(h.host.runner.wait(session_id, timeout=timeout), timeout=timeout + 5)


def approvals(h: WebHarness, *, status: str | None = None) -> list[Approval]:
    """Approvals in the store, oldest first."""
    found = h.call(h.host.store.list_approvals(status=status))
    return sorted(found, key=lambda a: (a.created_at, a.id))


def approval(h: WebHarness, approval_id: str) -> Approval:
    return h.call(h.host.store.get_approval(approval_id))


def assert_still_waiting(h: WebHarness, approval_id: str) -> None:
    """The request is pending with no decision recorded, and its session is still going."""
    waiting = approval(h, approval_id)
    assert waiting.status == "pending"
    assert waiting.decision is None and waiting.decided_by is None
    assert h.call(h.host.store.get_session(waiting.session_id)).status in ACTIVE_STATUSES


def tool_calls(h: WebHarness, session_id: str) -> dict[str, ToolCallRecord]:
    """The session's tool calls by name (each test calls a tool once unless it says otherwise)."""
    return {c.name: c for c in h.call(h.host.store.list_tool_calls(session_id))}


def audit(h: WebHarness) -> list[AuditEntry]:
    return h.call(h.host.store.list_audit(limit=500))


def card(page: Page) -> Locator:
    """The focused approval card."""
    return page.get_by_test_id("approval-card")


def decided(page: Page, approval_id: str) -> Locator:
    return page.locator(f'[data-testid="approval-decided"][data-approval-id="{approval_id}"]')


class DecisionRequests:
    """Every POST the page sends to /api/approvals/..., in order."""

    def __init__(self, page: Page) -> None:
        self.sent: list[dict[str, Any]] = []
        page.on("request", self._seen)

    def _seen(self, request: Request) -> None:
        if request.method == "POST" and "/api/approvals/" in request.url:
            self.sent.append({"url": request.url, "body": request.post_data_json})


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot under tests/artifacts/ (gitignored) and return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def page_screenshot(page: Page, name: str) -> Path:
    """`screenshot` from the top of the page, so the sticky top bar sits where it belongs."""
    page.evaluate("window.scrollTo(0, 0)")
    return screenshot(page, name)
