"""A Telegram approval outlives a restart of Overseer: the old card's button still answers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from tests.channels.fake_bot_api import FakeBotApi
from tests.channels.support import ANN, BOUND, channel_of, telegram_host, write_notes

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_press_after_a_restart_allows_the_pending_call_once_and_the_answer_reaches_the_chat(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api:
            async with telegram_host(tmp_path, model, api, pool) as first:
                await api.send_text(ANN, "write a note")
                approval = await first.next_approval(timeout=BOUND)
                card = await api.wait_for("sendMessage", lambda p: bool(p.get("reply_markup")))
            # The host is gone with the approval pending; a new one starts on the same data.
            sent_before = len(api.called("sendMessage"))
            async with telegram_host(tmp_path, model, api, pool) as second:
                assert (await second.host.store.get_approval(approval.id)).status == "pending"
                message_id = api.card_for(approval.id)["message_id"]
                query = await api.press(ANN, message_id, f"o:{approval.id}")
                await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query)
                done = await second.host.runner.wait(approval.session_id, timeout=BOUND)
                await api.wait_for_text(ANN, "The note was written")
                edited = await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id)
                closed = await second.host.store.get_approval(approval.id)
                calls = await second.host.store.list_tool_calls(approval.session_id)
    assert int(card.params["chat_id"]) == ANN
    assert not [c for c in api.called("sendMessage")[sent_before:] if c.params.get("reply_markup")]  # no second card
    assert done.status == "completed"
    assert (second.workspace / "notes.txt").read_text() == "hello"
    assert [(c.name, c.status) for c in calls] == [("mcp__file__write_file", "done")]  # exactly once
    assert (closed.status, closed.decider.name, closed.decider.via) == ("allowed", "ann", "channel")
    assert "Allowed once by ann" in edited.params["text"]


async def test_an_approval_answered_while_the_channel_was_down_has_its_card_edited_at_the_next_start(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api:
            async with telegram_host(tmp_path, model, api, pool) as first:
                await api.send_text(ANN, "write a note")
                approval = await first.next_approval(timeout=BOUND)
                await api.wait_for("sendMessage", lambda p: bool(p.get("reply_markup")))
                message_id = api.card_for(approval.id)["message_id"]
                channel = channel_of(first.host)
                await channel.aclose()  # the channel stops; the host goes on, and the dashboard answers
                first.host.attached.remove(channel)
                await first.answer(approval, Decision(kind="deny"))
            async with telegram_host(tmp_path, model, api, pool):
                edited = await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id)
    assert "Denied by tester (via rest)" in edited.params["text"]


async def test_a_reason_written_after_a_restart_still_denies_and_is_no_prompt(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api:
            async with telegram_host(tmp_path, model, api, pool) as first:
                await api.send_text(ANN, "write a note")
                approval = await first.next_approval(timeout=BOUND)
                await api.wait_for("sendMessage", lambda p: bool(p.get("reply_markup")))
                await api.press(ANN, api.card_for(approval.id)["message_id"], f"r:{approval.id}")
                await api.wait_for("sendMessage", lambda p: p["text"].startswith("Why deny it?"))
            async with telegram_host(tmp_path, model, api, pool) as second:
                await api.send_text(ANN, "not in my home folder")
                done = await second.host.runner.wait(approval.session_id, timeout=BOUND)
                closed = await second.host.store.get_approval(approval.id)
                prompts = [m.content for m in await second.host.store.list_messages(approval.session_id) if m.role == "user"]
    assert (closed.status, closed.decision.message, closed.decider.name) == ("denied", "not in my home folder", "ann")
    assert prompts == ["write a note"] and done.status == "completed"
