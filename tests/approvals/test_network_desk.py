"""The network desk under `permissions.after_untrusted: ask` (issue 34, item 5): once outside text
came into a session, every connection asks, a remembered host too, naming the result before it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from backend.approvals.network_desk import NetworkDesk
from backend.approvals.untrusted import AfterUntrusted, UntrustedContent
from backend.domain.models import Decision, ToolCallRecord
from backend.sandbox.proxy import NetworkRequest


@dataclass
class Broker:
    """Opens nothing for real: records what was asked and answers allow once."""

    opened: list[dict[str, Any]] = field(default_factory=list)

    async def open(self, **asked: Any) -> SimpleNamespace:
        self.opened.append(asked)
        return SimpleNamespace(id=f"a{len(self.opened)}")

    async def wait(self, approval_id: str) -> SimpleNamespace:
        return SimpleNamespace(status="allowed", decision=Decision(kind="allow_once"))


class Sessions:
    closing = False

    async def approval_waiting(self, session_id: str, delta: int) -> None:
        pass


class Store:
    """Session "read-page" took in a page; session "clean" did not."""

    async def list_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        if session_id != "read-page":
            return []
        return [
            ToolCallRecord(id="c1", session_id=session_id, name="mcp__file__read_file"),
            ToolCallRecord(id="c2", session_id=session_id, name="mcp__browser__navigate", untrusted="https://x.example"),
        ]


def desk(tmp_path, setting: AfterUntrusted) -> tuple[NetworkDesk, Broker]:
    remembered = tmp_path / "network_allow.json"
    remembered.write_text(json.dumps(["api.example.com:443"]))
    broker = Broker()
    untrusted = UntrustedContent(Store(), setting=lambda: setting)  # type: ignore[arg-type]
    return NetworkDesk(broker, Sessions(), remembered=remembered, untrusted=untrusted), broker  # type: ignore[arg-type]


def request(session_id: str) -> NetworkRequest:
    return NetworkRequest(session_id=session_id, host="api.example.com", port=443, scheme="https")


async def test_a_remembered_host_asks_after_outside_text_naming_the_result_before_it(tmp_path):
    network, broker = desk(tmp_path, "ask")
    assert await network.decide(request("read-page")) is True  # the person allowed it once
    [asked] = broker.opened
    assert "after the result of mcp__browser__navigate at step 2" in asked["reason"]
    assert "https://x.example" in asked["reason"]


async def test_a_remembered_host_runs_unasked_in_a_clean_session_or_with_the_setting_off(tmp_path):
    network, broker = desk(tmp_path, "ask")
    assert await network.decide(request("clean")) is True
    off, off_broker = desk(tmp_path, "off")
    assert await off.decide(request("read-page")) is True
    assert broker.opened == [] and off_broker.opened == []
