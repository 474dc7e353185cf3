"""The Telegram channel end to end: a fake Bot API server, the scripted model, real file server.

A listed person's message starts a session; the scripted model's write_file asks; the card with
its buttons reaches the chat; a press answers through the approval door as that person. No
sleeps: every wait is on the fake server's record of calls or on the host, bounded.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedModelServer
from backend.testing.harness import Harness
from tests.channels.fake_bot_api import FakeBotApi
from tests.channels.support import ANN, BOB, BOUND, STRANGER, VIC, telegram_host, write_notes

pytestmark = pytest.mark.asyncio(loop_scope="module")


def has_keyboard(params: dict) -> bool:
    return bool(params.get("reply_markup"))


async def card_of_new_session(h: Harness, api: FakeBotApi, user: int = ANN, text: str = "write a note"):
    """The person writes; the session starts and asks; its approval and the card the bot sent."""
    await api.send_text(user, text)
    approval = await h.next_approval(timeout=BOUND)
    card = await api.wait_for("sendMessage", has_keyboard)
    return approval, card


def buttons(card) -> list[tuple[str, str]]:
    return [(b["text"], b["callback_data"]) for row in card.params["reply_markup"]["inline_keyboard"] for b in row]


async def test_a_listed_users_message_starts_a_session_whose_approval_a_button_press_allows(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, card = await card_of_new_session(h, api)
            session = await h.host.store.get_session(approval.session_id)
            assert session.origin == "telegram" and session.title == "write a note"
            # The sender owns the session and wrote its message (auto-approve covers only its owner's turns).
            assert (session.created_by.name, session.created_by.kind, session.created_by.via) == ("ann", "user", "channel")
            (first,) = [m for m in await h.host.store.list_messages(session.id) if m.role == "user"]
            assert first.author == session.created_by
            assert int(card.params["chat_id"]) == ANN
            assert "file › write_file" in card.params["text"] and "notes.txt" in card.params["text"]
            assert buttons(card) == [
                ("Allow once", f"o:{approval.id}"),
                ("Allow for session", f"s:{approval.id}"),
                ("Deny", f"d:{approval.id}"),
                ("Deny with reason", f"r:{approval.id}"),
            ]
            message_id = max(api.messages)
            query = await api.press(ANN, message_id, f"o:{approval.id}")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query)
            done = await h.host.runner.wait(approval.session_id, timeout=BOUND)
            edited = await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id)
            await api.wait_for_text(ANN, "The note was written")
            closed = await h.host.store.get_approval(approval.id)
            calls = await h.host.store.list_tool_calls(approval.session_id)
    assert done.status == "completed"
    assert (h.workspace / "notes.txt").read_text() == "hello"
    assert [(c.name, c.status) for c in calls] == [("mcp__file__write_file", "done")]  # once
    assert (closed.status, closed.decider.name, closed.decider.via) == ("allowed", "ann", "channel")
    assert "Allowed once by ann" in toast.params["text"]
    assert "Allowed once by ann (via channel)" in edited.params["text"]
    assert not api.messages[message_id]["reply_markup"]  # the buttons are gone


async def test_a_stranger_gets_one_polite_refusal_and_nothing_else_happens(
    tmp_path: Path, pool: McpPool, caplog: pytest.LogCaptureFixture
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            with caplog.at_level(logging.WARNING, logger="backend.channels"):
                await api.send_text(STRANGER, "hello bot")
                refusal = await api.wait_for("sendMessage")
                # A listed person's message after it proves the stranger's was fully handled.
                await api.send_text(ANN, "/help")
                await api.wait_for("sendMessage", lambda p: int(p["chat_id"]) == ANN)
            sessions = await h.host.store.list_sessions()
    assert int(refusal.params["chat_id"]) == STRANGER and "Sorry" in refusal.params["text"]
    assert [c for c in api.called("sendMessage") if int(c.params["chat_id"]) == STRANGER] == [refusal]
    assert sessions == [] and model.requests == []
    assert any("unknown user 999" in r.getMessage() for r in caplog.records)


async def test_a_second_press_changes_nothing_and_says_who_answered(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, _ = await card_of_new_session(h, api)
            card = api.card_for(approval.id)
            await api.press(ANN, card["message_id"], f"o:{approval.id}")
            await h.host.runner.wait(approval.session_id, timeout=BOUND)
            second = await api.press(BOB, card["message_id"], f"d:{approval.id}")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == second)
            closed = await h.host.store.get_approval(approval.id)
    assert toast.params["text"].startswith("Already answered. Allowed once by ann")
    assert (closed.status, closed.decider.name) == ("allowed", "ann")
    assert (h.workspace / "notes.txt").read_text() == "hello"


async def test_an_answer_on_the_dashboard_edits_the_card_and_a_later_press_says_who_answered(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, _ = await card_of_new_session(h, api)
            message_id = api.card_for(approval.id)["message_id"]
            await h.answer(approval, Decision(kind="deny", message="not today"))
            edited = await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id)
            late = await api.press(ANN, message_id, f"o:{approval.id}")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == late)
            done = await h.host.runner.wait(approval.session_id, timeout=BOUND)
            closed = await h.host.store.get_approval(approval.id)
    assert "Denied by tester (via rest): not today" in edited.params["text"]
    assert "Already answered. Denied by tester" in toast.params["text"]
    assert (closed.status, closed.decider.name) == ("denied", "tester")
    assert done.status == "completed" and not (h.workspace / "notes.txt").exists()


async def test_deny_with_reason_takes_the_next_message_as_the_reason_the_model_reads(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, _ = await card_of_new_session(h, api)
            message_id = api.card_for(approval.id)["message_id"]
            await api.press(ANN, message_id, f"r:{approval.id}")
            await api.wait_for("sendMessage", lambda p: p["text"].startswith("Why deny it?"))
            assert (await h.host.store.get_approval(approval.id)).status == "pending"
            await api.send_text(ANN, "use the wiki instead")
            done = await h.host.runner.wait(approval.session_id, timeout=BOUND)
            closed = await h.host.store.get_approval(approval.id)
            messages = await h.host.store.list_messages(approval.session_id)
    assert (closed.status, closed.decision.message, closed.decider.name) == ("denied", "use the wiki instead", "ann")
    assert done.status == "completed" and not (h.workspace / "notes.txt").exists()
    assert [m.content for m in messages if m.role == "user"] == ["write a note"]  # the reason was no new prompt
    [result] = model.requests[-1].tool_results()
    assert "denied by the person" in result.text and "use the wiki instead" in result.text


async def test_a_viewer_may_not_answer_and_the_approval_stays_open(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, _ = await card_of_new_session(h, api)
            query = await api.press(VIC, api.card_for(approval.id)["message_id"], f"o:{approval.id}")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query)
            still = await h.host.store.get_approval(approval.id)
            await h.answer(approval, Decision(kind="deny"))
            await h.host.runner.wait(approval.session_id, timeout=BOUND)
    assert "approver role" in toast.params["text"]
    assert still.status == "pending"


async def test_approvals_of_other_sessions_reach_the_people_who_opted_in(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            session = await h.start("write a note")  # begun on the dashboard, not in Telegram
            approval = await h.next_approval(timeout=BOUND)
            card = await api.wait_for("sendMessage", has_keyboard)
            await api.press(ANN, api.card_for(approval.id)["message_id"], f"s:{approval.id}")
            done = await h.host.runner.wait(session.id, timeout=BOUND)
            closed = await h.host.store.get_approval(approval.id)
    assert int(card.params["chat_id"]) == ANN  # ann opted in; bob and vic did not
    assert [int(c.params["chat_id"]) for c in api.called("sendMessage")] == [ANN]  # no answer streamed there
    assert (closed.decision.kind, closed.decider.name, done.status) == ("allow_session", "ann", "completed")


async def test_the_token_never_reaches_a_log_line(tmp_path: Path, pool: McpPool, caplog: pytest.LogCaptureFixture):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api:
            # Other libraries quieten httpx and telegram on import; here they speak their fullest.
            with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="httpx"), \
                    caplog.at_level(logging.DEBUG, logger="telegram.Bot"):
                async with telegram_host(tmp_path, model, api, pool):
                    await api.send_text(BOB, "/help")
                    await api.wait_for("sendMessage")
    lines = [r.getMessage() for r in caplog.records]
    assert any("/bot[redacted]/getUpdates" in line for line in lines)  # httpx did log the URL
    assert not [line for line in lines if api.token in line or api.token.split(":")[1] in line]


async def test_a_sub_agents_approval_goes_to_the_chat_of_the_telegram_session_above_it(tmp_path: Path, pool: McpPool):
    def script(request):
        return Reply(text="hi") if request.last_prompt() == "hello" else write_notes(request)

    with ScriptedModelServer(script) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_text(BOB, "hello")  # bob is not in telegram.notify
            await api.wait_for_text(BOB, "hi")
            [parent] = await h.host.store.list_sessions()
            child = await h.host.sessions.start(
                prompt="write a note", options=SessionOptions(parent_id=parent.id)
            )
            approval = await h.next_approval(timeout=BOUND)
            card = await api.wait_for("sendMessage", has_keyboard)
            await h.answer(approval, Decision(kind="deny"))
            await h.host.runner.wait(child.id, timeout=BOUND)
    assert approval.session_id == child.id
    assert int(card.params["chat_id"]) == BOB
    assert len(api.called("sendMessage")) == 2  # "hi" and the card: ann (notify) got nothing


async def test_a_press_whose_toast_and_card_edit_lose_their_connection_sends_them_again(tmp_path: Path, pool: McpPool):
    # Issue 31, item 12: the answer is in; what tells the person so is sent again after a dropped connection.
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            approval, _ = await card_of_new_session(h, api)
            message_id = max(api.messages)
            api.drop.update({"answerCallbackQuery": 1, "editMessageText": 1})
            query = await api.press(ANN, message_id, f"o:{approval.id}")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query)
            edited = await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id)
            done = await h.host.runner.wait(approval.session_id, timeout=BOUND)
    assert sorted(c.method for c in api.dropped) == ["answerCallbackQuery", "editMessageText"]
    assert "Allowed once by ann" in toast.params["text"]
    assert "Allowed once by ann (via channel)" in edited.params["text"]
    assert done.status == "completed" and (h.workspace / "notes.txt").read_text() == "hello"
