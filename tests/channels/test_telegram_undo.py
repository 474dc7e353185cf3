"""Telegram's `/undo` (backend/channels/telegram_undo.py) against the fake Bot API: it shows what it
would restore and rewinds only on a press of "Undo it", as the person who pressed, through the
same door as REST and the command line (the audit row names them). No sleeps: every wait is on
the fake server's record of calls or on the host, bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.audit import AuditQuery
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from backend.testing.harness import Harness
from tests.channels.fake_bot_api import FakeBotApi
from tests.channels.support import ANN, BOB, BOUND, STRANGER, VIC, telegram_host, write_notes

pytestmark = pytest.mark.asyncio(loop_scope="module")


def buttons(params: dict) -> list[tuple[str, str]]:
    return [(b["text"], b["callback_data"]) for row in params["reply_markup"]["inline_keyboard"] for b in row]


async def a_written_note(h: Harness, api: FakeBotApi) -> str:
    """ANN's session overwrites notes.txt ("old" -> "hello") once she allows it; its id."""
    (h.workspace / "notes.txt").write_text("old")
    await api.send_text(ANN, "write a note")
    approval = await h.next_approval(timeout=BOUND)
    await api.wait_for("sendMessage", lambda p: bool(p.get("reply_markup")), timeout=BOUND)
    card = api.card_for(approval.id)
    await api.press(ANN, card["message_id"], f"o:{approval.id}")
    done = await h.host.runner.wait(approval.session_id, timeout=BOUND)
    assert done.status == "completed" and (h.workspace / "notes.txt").read_text() == "hello"
    return approval.session_id


async def offer(api: FakeBotApi, user: int) -> dict:
    """`/undo` from `user`; the offer the bot sent back (with its buttons)."""
    sent = len(api.calls)
    await api.send_text(user, "/undo")
    call = await api.wait_for("sendMessage", lambda p: "Undo step" in p["text"], after=sent, timeout=BOUND)
    return call.params


async def test_undo_asks_first_then_restores_the_workspace_as_the_presser_and_says_what_it_restored(
    tmp_path: Path, pool: McpPool
):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            session_id = await a_written_note(h, api)
            shown = await offer(api, ANN)
            assert "Undo step 1 (mcp__file__write_file)?" in shown["text"] and "  notes.txt" in shown["text"]
            assert buttons(shown) == [("Undo it", f"u:{session_id}:1"), ("Keep it", f"k:{session_id}:1")]
            assert (h.workspace / "notes.txt").read_text() == "hello"  # nothing happens before the press

            message_id = max(api.messages)
            query = await api.press(ANN, message_id, f"u:{session_id}:1")
            toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query, timeout=BOUND)
            await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id, timeout=BOUND)
            edited = api.messages[message_id]
            assert (h.workspace / "notes.txt").read_text() == "old"
            assert toast.params["text"].startswith("Restored the workspace to before step 1")
            assert "  notes.txt" in edited["text"] and "/undo again takes this back" in edited["text"]
            assert not edited["reply_markup"]
            [row] = await h.host.store.list_audit(query=AuditQuery(session_id=session_id, tool="rewind"))
            assert (row.decider.name, row.decider.via) == ("ann", "channel")

            # The same offer pressed again: the rewind is the session's newest step now.
            again = await api.press(ANN, message_id, f"u:{session_id}:1")
            stale = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == again, timeout=BOUND)
            assert "taken another step since" in stale.params["text"]
            assert (h.workspace / "notes.txt").read_text() == "old"

            # /undo again undoes the undo.
            second = await offer(api, ANN)
            assert f"u:{session_id}:2" in [data for _, data in buttons(second)]
            await api.press(ANN, max(api.messages), f"u:{session_id}:2")
            await api.wait_for_text(ANN, "Restored the workspace to before step 2 (a rewind)", timeout=BOUND)
            assert (h.workspace / "notes.txt").read_text() == "hello"


async def test_keep_it_and_presses_by_a_viewer_or_a_stranger_restore_nothing_and_leave_the_offer(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(write_notes) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            session_id = await a_written_note(h, api)
            await offer(api, ANN)
            message_id = max(api.messages)
            for user, says in (
                (STRANGER, "not on this bot's list"),
                (VIC, "only its owner (ann) or an admin"),
            ):
                query = await api.press(user, message_id, f"u:{session_id}:1")
                toast = await api.wait_for("answerCallbackQuery", lambda p: p["callback_query_id"] == query, timeout=BOUND)
                assert says in toast.params["text"]
                assert api.messages[message_id]["reply_markup"]  # still there for its owner
            kept = await api.press(ANN, message_id, f"k:{session_id}:1")
            await api.wait_for("editMessageText", lambda p: int(p["message_id"]) == message_id, timeout=BOUND)
            assert api.messages[message_id]["text"] == "Kept as it is: nothing was undone."
            assert (h.workspace / "notes.txt").read_text() == "hello"
            assert await h.host.store.list_audit(query=AuditQuery(session_id=session_id, tool="rewind")) == []

            # BOB's chat has no session of its own.
            sent = len(api.calls)
            await api.send_text(BOB, "/undo")
            await api.wait_for("sendMessage", lambda p: "no session yet" in p["text"], after=sent, timeout=BOUND)
