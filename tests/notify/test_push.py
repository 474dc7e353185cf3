"""Push notifications end to end: a local ntfy-like server and a webhook receiver (apprise json://).

The notification carries working answer links; GET shows the confirmation page and decides
nothing; POST decides once, as the person the link was made for; a second use, a changed
signature and an expired link are refused. A reminder goes out before the auto-deny.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from backend.channels.answer_links import AnswerLinks
from backend.domain.models import Decision, utcnow
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from tests.channels.support import write_notes
from tests.notify.receiver import Receiver
from tests.notify.support import push_host

pytestmark = pytest.mark.asyncio(loop_scope="module")
BOUND = 30


def path_of(url: str) -> str:
    return urlsplit(url).path


async def test_an_ntfy_notification_carries_links_that_confirm_on_get_and_decide_once_on_post(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with Receiver() as ntfy:
            notify = {"targets": [{"user": "ann", "ntfy": f"{ntfy.base}/approvals"}]}
            async with push_host(tmp_path, model, pool, notify) as s:
                session = await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                sent = await ntfy.next(timeout=BOUND)
                allow, deny = sent.body["actions"]
                page = await s.web.get(sent.body["click"])
                still = await s.h.host.store.get_approval(approval.id)
                decided = await s.web.post(allow["url"])
                done = await s.h.host.runner.wait(session.id, timeout=BOUND)
                again = await s.web.post(allow["url"])
                other = await s.web.post(deny["url"], headers={"Accept": "application/json"})
                closed = await s.h.host.store.get_approval(approval.id)
    assert sent.path == "/" and sent.body["topic"] == "approvals"
    assert "file › write_file" in sent.body["title"] and "notes.txt" in sent.body["message"]
    assert [(a["action"], a["label"], a["method"]) for a in (allow, deny)] == [
        ("http", "Allow once", "POST"), ("http", "Deny", "POST")
    ]
    assert all(a["url"].startswith("http://overseer.test/answer/") for a in (allow, deny))
    assert page.status_code == 200 and "notes.txt" in page.text and "<form method='post'>" in page.text
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert still.status == "pending"  # the GET decided nothing
    assert decided.status_code == 200 and "Allowed once by ann" in decided.text
    assert done.status == "completed" and (s.h.workspace / "notes.txt").read_text() == "hello"
    assert (closed.status, closed.decider.name, closed.decider.via) == ("allowed", "ann", "channel")
    # Pressed again (a retry after a dropped connection): the same answer, nothing changes.
    assert again.status_code == 200 and "Allowed once by ann" in again.text
    assert other.status_code == 409 and "Allowed once by ann" in other.json()["detail"]


async def test_an_apprise_webhook_gets_the_links_and_the_deny_link_denies_as_its_person(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with Receiver() as hook:
            target = {"user": "bob", "apprise": f"json://127.0.0.1:{hook.port}/hook"}
            async with push_host(tmp_path, model, pool, {"targets": [target]}) as s:
                session = await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                sent = await hook.next(timeout=BOUND)
                links = dict(line.split(": ", 1) for line in sent.body["message"].splitlines() if ": http" in line)
                page = await s.web.get(path_of(links["Deny"]))
                assert (await s.h.host.store.get_approval(approval.id)).status == "pending"
                decided = await s.web.post(path_of(links["Deny"]))
                done = await s.h.host.runner.wait(session.id, timeout=BOUND)
                closed = await s.h.host.store.get_approval(approval.id)
    assert sent.path == "/hook" and "write_file" in sent.body["title"]
    assert set(links) == {"Allow once", "Deny", "Review"}
    assert page.status_code == 200 and "Deny?" in page.text
    assert decided.status_code == 200
    assert (closed.status, closed.decider.name) == ("denied", "bob")
    assert done.status == "completed" and not (s.h.workspace / "notes.txt").exists()


async def test_a_changed_signature_and_an_expired_link_are_refused_and_decide_nothing(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with Receiver() as ntfy:
            notify = {"targets": [{"user": "ann", "ntfy": f"{ntfy.base}/t"}]}
            async with push_host(tmp_path, model, pool, notify) as s:
                await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                allow = (await ntfy.next(timeout=BOUND)).body["actions"][0]["url"]
                body, _, signature = path_of(allow).removeprefix("/answer/").partition(".")
                flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
                tampered = await s.web.post(f"/answer/{body}.{flipped}")
                forged = await s.web.get(f"/answer/{body}x.{signature}")
                old = approval.model_copy(update={"expires_at": utcnow() - timedelta(seconds=1)})
                expired_link = AnswerLinks(s.h.host.data_dir).token(old, "allow_once", "ann")
                expired = await s.web.post(f"/answer/{expired_link}")
                junk = await s.web.get("/answer/not-a-token")
                still = await s.h.host.store.get_approval(approval.id)
                await s.h.answer(approval, Decision(kind="deny"))
    assert (tampered.status_code, forged.status_code, junk.status_code) == (403, 403, 403)
    assert expired.status_code == 410
    assert still.status == "pending"


async def test_a_reminder_goes_out_before_the_auto_deny(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with Receiver() as ntfy:
            # Paged only late (notify_after far off), so the one push is the reminder 2 s before the deny.
            notify = {"targets": [{"user": "ann", "ntfy": f"{ntfy.base}/t"}], "notify_after": "1h", "remind_before": 2}
            async with push_host(tmp_path, model, pool, notify, approval_timeout=3) as s:
                session = await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                reminder = await ntfy.next(timeout=BOUND)
                at_reminder = await s.h.host.store.get_approval(approval.id)
                await s.h.host.runner.wait(session.id, timeout=BOUND)
    assert reminder.body["title"].startswith("Reminder:") and "denied in" in reminder.body["title"]
    assert at_reminder.status == "pending"
    assert len(ntfy.received) == 1


async def test_an_approval_answered_before_notify_after_pages_nobody(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with Receiver() as ntfy:
            notify = {"targets": [{"user": "ann", "ntfy": f"{ntfy.base}/t"}], "notify_after": "30s"}
            async with push_host(tmp_path, model, pool, notify) as s:
                session = await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                await s.h.answer(approval, Decision(kind="allow_once"))
                await s.h.host.runner.wait(session.id, timeout=BOUND)
                await s.h.next_event("session.status", timeout=BOUND)
                timers = dict(s.notifier._timers)
    assert timers == {}  # the pending page was cancelled by the answer
    assert ntfy.received == []
