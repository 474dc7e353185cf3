"""Who is paged when: a target's own delay, then a policy's for the tool or its server, then the default."""

from __future__ import annotations

from pathlib import Path

from backend.channels.push import PushNotifier
from backend.config import NotifyConfig, PushTarget
from backend.domain.models import Approval, utcnow


def test_the_most_specific_delay_wins(tmp_path: Path):
    class FakeServices:
        data_dir = tmp_path
        settings = type("S", (), {"host": "127.0.0.1", "port": 8000})()

    config = NotifyConfig(notify_after=5, policies={"mcp__shell": 60, "mcp__shell__exec": 10})
    notifier = PushNotifier(FakeServices(), config)  # type: ignore[arg-type]
    ann = PushTarget(user="ann", ntfy="http://127.0.0.1:9/t")
    own = PushTarget(user="bob", ntfy="http://127.0.0.1:9/t", notify_after=0)

    def approval(tool: str) -> Approval:
        return Approval(id="a", session_id="s", tool_call_id="c", tool_name=tool, expires_at=utcnow())

    assert notifier.delay_for(approval("mcp__shell__exec"), ann) == 10
    assert notifier.delay_for(approval("mcp__shell__kill"), ann) == 60
    assert notifier.delay_for(approval("mcp__file__write_file"), ann) == 5
    assert notifier.delay_for(approval("mcp__shell__exec"), own) == 0
