"""What people send the bot: photos and documents, /new, /mode, /help, and a streamed answer."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from backend.mcp.pool import McpPool
from backend.testing import ModelRequest, Reply, ScriptedModelServer
from tests.channels.fake_bot_api import FakeBotApi
from tests.channels.support import ANN, BOUND, VIC, telegram_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def echo(request: ModelRequest) -> Reply:
    """Answers with what it was given: the prompt and how many images came with it."""
    return Reply(text=f"got {request.last_prompt()!r} with {len(request.images())} image(s)")


async def test_a_photo_and_a_document_are_saved_in_the_workspace_and_attached(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(echo) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_photo(ANN, PNG, caption="what is this?")
            await api.wait_for_text(ANN, "with 1 image(s)")
            await api.send_document(ANN, "../../notes.md", b"# Plan\nship it\n", "text/markdown", caption="read it")
            await api.wait_for_text(ANN, "read it")
            [session] = await h.host.store.list_sessions()
            messages = [m for m in await h.host.store.list_messages(session.id) if m.role == "user"]
    saved = sorted(p.name for p in (h.workspace / "telegram").iterdir())
    assert saved == ["notes.md", "photo-uphoto-0.jpg"]  # the document's path cannot climb out
    assert (h.workspace / "telegram" / "photo-uphoto-0.jpg").read_bytes() == PNG
    assert (h.workspace / "telegram" / "notes.md").read_text() == "# Plan\nship it\n"
    assert [a.kind for a in messages[0].attachments] == ["image"]
    assert "telegram/photo-uphoto-0.jpg" in messages[0].content
    assert [(a.kind, a.name) for a in messages[1].attachments] == [("file", "telegram/notes.md")]
    assert "ship it" in messages[1].attachments[0].text


async def test_new_starts_another_session_and_mode_chooses_the_next_ones_mode(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(echo) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_text(ANN, "first")
            await api.wait_for_text(ANN, "got 'first'")
            await api.send_text(ANN, "second")
            await api.wait_for_text(ANN, "got 'second'")
            await api.send_text(ANN, "/new")
            await api.wait_for_text(ANN, "next message starts a new session")
            await api.send_text(ANN, "/mode ask")
            await api.wait_for_text(ANN, "starts in ask mode")
            await api.send_text(ANN, "third")
            await api.wait_for_text(ANN, "got 'third'")
            await api.send_text(ANN, "/mode nosuchmode")
            refused = await api.wait_for_text(ANN, "nosuchmode")
            await api.send_text(ANN, "/help")
            helped = await api.wait_for_text(ANN, "/new: start a new session")
            sessions = sorted(await h.host.store.list_sessions(), key=lambda s: s.created_at)
    assert [(s.title, s.mode, s.origin) for s in sessions] == [("first", "agent", "telegram"), ("third", "ask", "telegram")]
    assert "Modes:" in helped["text"] and "ask" in helped["text"]
    assert "nosuchmode" in refused["text"]


async def test_a_viewer_cannot_start_work(tmp_path: Path, pool: McpPool):
    with ScriptedModelServer(echo) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_text(VIC, "do something")
            said = await api.wait_for_text(VIC, "viewer")
            sessions = await h.host.store.list_sessions()
    assert sessions == [] and model.requests == [] and "not start work" in said["text"]


async def test_a_long_answer_streams_into_one_message_edited_until_it_is_complete(tmp_path: Path, pool: McpPool):
    words = " ".join(f"word{i}" for i in range(60))
    with ScriptedModelServer([Reply(text=words, chunk_interval=0.01)]) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_text(ANN, "talk")
            final = await api.wait_for_text(ANN, "word59")
            [session] = await h.host.store.list_sessions()
            await h.host.runner.wait(session.id, timeout=BOUND)
    replies = [m for m in api.messages.values() if m["chat_id"] == ANN]
    assert [m["text"] for m in replies] == [words]  # one message, ending with the whole answer
    assert final["text"] == words
    assert api.called("editMessageText")  # it grew by edits, not new messages


async def test_an_answer_longer_than_a_telegram_message_arrives_in_parts(tmp_path: Path, pool: McpPool):
    lines = [f"line {i:04d} of the long answer" for i in range(300)]  # about 8,400 characters
    with ScriptedModelServer([Reply(text="\n".join(lines))]) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool) as h:
            await api.send_text(ANN, "talk at length")
            await api.wait_for_text(ANN, lines[-1])
            [session] = await h.host.store.list_sessions()
            await h.host.runner.wait(session.id, timeout=BOUND)
    replies = [m["text"] for m in api.messages.values() if m["chat_id"] == ANN]
    assert len(replies) >= 3 and all(len(text) <= 4096 for text in replies)
    assert "\n".join(replies).splitlines() == lines


async def test_a_chat_goes_to_its_routed_agent_and_agent_chooses_another_for_the_next_session(tmp_path: Path, pool: McpPool):
    for name in ("ops", "reviews"):
        (tmp_path / name).mkdir()
    agents = [
        {"id": "ops", "workspace": str(tmp_path / "ops")},
        {"id": "reviewer", "name": "Code reviewer", "workspace": str(tmp_path / "reviews")},
    ]
    routes = [{"channel": "telegram", "user": "ann", "agent": "ops"}]
    with ScriptedModelServer(echo) as model:
        async with FakeBotApi() as api, telegram_host(tmp_path, model, api, pool, agents=agents, routes=routes) as h:
            await api.send_text(ANN, "first")
            await api.wait_for_text(ANN, "got 'first'")
            await api.send_text(ANN, "/agent ghost")
            refused = await api.wait_for_text(ANN, "ghost")
            await api.send_text(ANN, "/agent reviewer")
            await api.wait_for_text(ANN, "new session with Code reviewer")
            await api.send_text(ANN, "second")
            await api.wait_for_text(ANN, "got 'second'")
            sessions = sorted(await h.host.store.list_sessions(), key=lambda s: s.created_at)
    assert [(s.title, s.agent_id) for s in sessions] == [("first", "ops"), ("second", "reviewer")]
    assert [s.workspace for s in sessions] == [str((tmp_path / d).resolve()) for d in ("ops", "reviews")]
    assert "no agent 'ghost' is configured (agents: main, ops, reviewer)" in refused["text"]
