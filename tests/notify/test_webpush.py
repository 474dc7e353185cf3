"""Web Push against a local push service that checks the VAPID signature and decrypts the push."""

from __future__ import annotations

import stat
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from backend.channels.webpush import KEY_FILE, WebPush, WebPushSubscription
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from tests.channels.support import write_notes
from tests.notify.push_service import PushService
from tests.notify.support import push_host

pytestmark = pytest.mark.asyncio(loop_scope="module")
BOUND = 30


def authed(s) -> dict[str, str]:
    return {"Authorization": f"Bearer {s.web._transport.app.state.auth.token}"}


async def test_a_subscribed_browser_gets_a_signed_encrypted_push_whose_button_answers_as_its_person(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with PushService() as service:
            async with push_host(tmp_path, model, pool, {"webpush": True}) as s:
                anonymous = await s.web.get("/api/push/vapid-key")
                key = (await s.web.get("/api/push/vapid-key", headers=authed(s))).json()["public_key"]
                subscribed = await s.web.post("/api/push/subscriptions", json=service.subscription(), headers=authed(s))
                session = await s.h.start("write a note")
                approval = await s.h.next_approval(timeout=BOUND)
                pushed = await service.next(timeout=BOUND)
                allow = pushed["actions"][0]
                page = await s.web.get(urlsplit(pushed["review"]).path)
                decided = await s.web.post(urlsplit(allow["url"]).path)
                done = await s.h.host.runner.wait(session.id, timeout=BOUND)
                closed = await s.h.host.store.get_approval(approval.id)
                key_mode = stat.S_IMODE((s.h.host.data_dir / KEY_FILE).stat().st_mode)
    assert anonymous.status_code == 401
    assert subscribed.status_code == 204
    assert service.vapid_keys == [key]  # signed by the key the dashboard was given
    assert "write_file" in pushed["title"] and "notes.txt" in pushed["body"]
    assert [a["title"] for a in pushed["actions"]] == ["Allow once", "Deny"]
    assert page.status_code == 200 and decided.status_code == 200
    assert (closed.status, closed.decider.name) == ("allowed", "admin")  # the subscriber
    assert done.status == "completed" and (s.h.workspace / "notes.txt").read_text() == "hello"
    assert key_mode == 0o600


async def test_a_subscription_the_push_service_calls_gone_is_dropped(tmp_path: Path):
    async with PushService(gone=True) as service:
        webpush = WebPush(tmp_path)
        webpush.subscribe(WebPushSubscription.model_validate(service.subscription()), "admin")
        [subscription] = webpush.subscriptions()
        delivered = await webpush.send(subscription, {"title": "t"})
    assert service.vapid_keys == [webpush.public_key]  # it was pushed, signed
    assert delivered is False and webpush.subscriptions() == []


async def test_a_person_removes_only_their_own_subscription(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with PushService() as service:
            async with push_host(tmp_path, model, pool, {"webpush": True}) as s:
                sub = service.subscription()
                await s.web.post("/api/push/subscriptions", json=sub, headers=authed(s))
                other = WebPushSubscription.model_validate(sub | {"endpoint": sub["endpoint"] + "2"})
                s.notifier.webpush.subscribe(other, "someone-else")
                theirs = await s.web.delete("/api/push/subscriptions", params={"endpoint": sub["endpoint"] + "2"},
                                            headers=authed(s))
                mine = await s.web.delete("/api/push/subscriptions", params={"endpoint": sub["endpoint"]},
                                          headers=authed(s))
                left = [x.user for x in s.notifier.webpush.subscriptions()]
    assert (theirs.status_code, mine.status_code) == (404, 204)
    assert left == ["someone-else"]
