"""Tool results reach the model whole, through both engines: a real MCP server process (written
with the SDK) returns images, audio, resources and structured-only content; the scripted model's
request log shows what the model received, in each provider's form."""

from __future__ import annotations

import sqlite3
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from backend.domain.media import MediaFile
from backend.domain.models import Message, ToolCallRequest
from backend.engine.loop import to_wire
from backend.engine.models.tool_media import MAX_IMAGE_BYTES_PER_REQUEST, MAX_IMAGES_PER_REQUEST, tool_image_style
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from content_server import PNG, WAV  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

SERVER = Path(__file__).parent / "fixtures" / "content_server.py"
ALLOW = {"permissions": {"allow": ["mcp__content"]}}

# How each engine reaches the scripted model: our loop with an OpenAI-style model and with an
# Anthropic model (the API with images inside tool results), each on the direct path (the ids keep
# their old "litellm-" names) and the Anthropic one also through LiteLLM, and the Claude Agent SDK's CLI.
ENGINES: dict[str, Callable[[ScriptedModelServer], dict[str, Any]]] = {
    "litellm-openai": lambda m: {},
    "litellm-anthropic": lambda m: {"model": "anthropic/claude-scripted", "api_base": m.anthropic_base},
    "anthropic-via-litellm": lambda m: {
        "model": "anthropic/claude-scripted",
        "api_base": m.anthropic_base,
        "model_transport": "litellm",
    },
    "claude-sdk": lambda m: {"default_engine": "claude-sdk"},
}
API = {
    "litellm-openai": "openai",
    "litellm-anthropic": "anthropic",
    "anthropic-via-litellm": "anthropic",
    "claude-sdk": "anthropic",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def content_pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    root = tmp_path_factory.mktemp("content")
    config = McpServerConfig(command=sys.executable, args=[str(SERVER)], start_timeout=30)
    async with McpPool({"content": config}, log_dir=root / "logs") as pool:
        await pool.wait_ready(timeout=60)
        yield pool


def host_on(engine: str, root: Path, script: list[Reply], pool: McpPool) -> AbstractAsyncContextManager[Harness]:
    return scripted_host(root, script, pool=pool, for_model=ENGINES[engine], **ALLOW)


def calls(*tools: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=f"mcp__content__{t}", arguments={}) for t in tools])


@pytest.mark.parametrize("engine", ENGINES)
async def test_an_image_a_tool_returns_reaches_the_model_and_is_kept_as_a_private_file(
    tmp_path: Path, content_pool: McpPool, engine: str
) -> None:
    async with host_on(engine, tmp_path, [calls("screenshot"), Reply(text="A red square.")], content_pool) as h:
        session = await h.run("look at the page", timeout=90)
        assert session.status == "completed", session.error
        request = h.model.requests[-1]
        [image] = request.images()
        assert (image.mime_type, image.data) == ("image/png", PNG)
        # Anthropic: inside the tool_result. OpenAI: a user message after the tool message.
        assert image.in_tool_result == (API[engine] == "anthropic")
        [result] = request.tool_results()
        assert result.text.startswith("the page at /home")

        [message] = [m for m in await h.host.store.list_messages(session.id) if m.role == "tool"]
        [media] = message.media
        assert (media.kind, media.mime_type) == ("image", "image/png")
        path = h.host.media.path(session.id, media.name)
        assert path == h.host.data_dir / "media" / session.id / media.name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.media == [media]
        with sqlite3.connect(h.host.settings.db_path) as db:
            rows = " ".join(r[0] for r in db.execute("SELECT data FROM messages UNION ALL SELECT data FROM events"))
        assert PNG[:40] not in rows  # referenced, never inlined
        h.model.assert_all_used()


@pytest.mark.parametrize("engine", ENGINES)
async def test_structured_only_audio_and_resource_results_reach_the_model_faithfully(
    tmp_path: Path, content_pool: McpPool, engine: str
) -> None:
    script = [calls("weather", "chime", "documents"), Reply(text="Noted.")]
    async with host_on(engine, tmp_path, script, content_pool) as h:
        session = await h.run("gather", timeout=90)
        assert session.status == "completed", session.error
        texts = {r.tool_call_id: r.text for r in h.model.requests[-1].tool_results()}
        by_name = {c.name.split("__")[-1]: texts[c.id] for c in (await h.host.store.list_tool_calls(session.id))}
        assert by_name["weather"] == '{"city": "Oslo", "temperature": -3.5}'
        assert by_name["chime"].startswith("[audio (audio/wav, 48 bytes) returned")
        assert by_name["documents"].splitlines() == [
            '<resource uri="file:///notes.md" mimeType="text/markdown">',
            "# Notes",
            "</resource>",
            '<resource uri="file:///data.bin" mimeType="application/octet-stream">',
            "[binary content, 4 bytes, not shown]",
            "</resource>",
            '<resource_link uri="file:///report.pdf" name="report" mimeType="application/pdf">Q3</resource_link>',
        ]
        assert h.model.requests[-1].images() == []
        # The clip is kept for the person; the model got the note.
        [chime] = [m for m in await h.host.store.list_messages(session.id) if m.role == "tool" and m.media]
        assert [(m.kind, m.mime_type) for m in chime.media] == [("audio", "audio/wav")]
        assert h.host.media.read_base64(session.id, chime.media[0].name) == WAV
        h.model.assert_all_used()


async def test_deleting_a_session_deletes_the_images_its_tools_returned(tmp_path: Path, content_pool: McpPool) -> None:
    async with host_on("litellm-openai", tmp_path, [calls("screenshot"), Reply(text="ok")], content_pool) as h:
        session = await h.run("look", timeout=60)
        folder = h.host.data_dir / "media" / session.id
        assert len(list(folder.iterdir())) == 1
        await h.host.sessions.delete(session.id)
        assert not folder.exists()


def tool_turn(idx: int, sizes: list[int]) -> list[Message]:
    """An assistant call at `idx` and its result with images of these sizes."""
    call = ToolCallRequest(id=f"c{idx}", name="mcp__content__screenshot")
    media = [MediaFile(kind="image", name=f"{idx:064x}"[:63] + f"{n}.png", mime_type="image/png", size=s) for n, s in enumerate(sizes)]
    return [
        Message(session_id="s", idx=idx, role="assistant", tool_calls=[call]),
        Message(session_id="s", idx=idx + 1, role="tool", tool_call_id=call.id, name=call.name, content="shot", media=media),
    ]


async def test_only_the_newest_images_are_sent_whole_and_older_ones_become_a_note() -> None:
    history = [Message(session_id="s", idx=0, role="user", content="look")]
    for turn in range(MAX_IMAGES_PER_REQUEST + 1):
        history += tool_turn(1 + 2 * turn, [1000])
    wire = to_wire("", history, read_media=lambda sid, name: "AAAA", tool_images="in_result")
    parts = [p for m in wire if m["role"] == "tool" for p in m["content"] if p["type"] != "text" or "image" in p["text"]]
    assert [p["type"] for p in parts] == ["text"] + ["image_url"] * MAX_IMAGES_PER_REQUEST
    assert "not sent again" in parts[0]["text"]


async def test_images_past_the_byte_budget_of_a_request_become_a_note() -> None:
    big = MAX_IMAGE_BYTES_PER_REQUEST // 2 + 1
    history = tool_turn(0, [big]) + tool_turn(2, [big])
    wire = to_wire("", history, read_media=lambda sid, name: "AAAA")
    [first, second] = [m for m in wire if m["role"] == "user"]
    assert [p["type"] for p in first["content"][1:]] == ["text", "text"]  # "From ...", the note
    assert [p["type"] for p in second["content"][1:]] == ["text", "image_url"]


async def test_an_image_whose_file_is_gone_is_a_note_saying_so() -> None:
    wire = to_wire("", tool_turn(0, [10]), read_media=lambda sid, name: None, tool_images="in_result")
    assert wire[-1]["content"][-1] == {"type": "text", "text": "[an image (image/png) whose file is gone]"}


async def test_images_go_inside_tool_results_only_when_every_model_a_request_may_reach_takes_them() -> None:
    assert tool_image_style(["anthropic/claude-sonnet-4-5"]) == "in_result"
    assert tool_image_style(["claude-sonnet-4-5", "anthropic/claude-haiku"]) == "in_result"
    assert tool_image_style(["anthropic/claude-sonnet-4-5", "openai/gpt-4o"]) == "user_message"
    assert tool_image_style(["openai/gpt-4o"]) == "user_message"
    assert tool_image_style(["ollama/llava"]) == "user_message"
