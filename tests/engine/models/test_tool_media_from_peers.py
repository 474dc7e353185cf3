"""Results shaped as third-party servers send them reach the model as the model can use them (issue 35,
items 1 and 2): a real SDK server process answers with media plus `structuredContent` (as the
reference filesystem server does) and with blocks annotated for one audience; the scripted model's
request log shows what each wire path sent."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from backend.domain.tools import FOR_MODEL_ONLY, FOR_USER_ONLY
from backend.mcp.config import McpServerConfig
from backend.mcp.pool import McpPool
from backend.mcp.results import SPILL_DIR
from backend.testing import Reply, ScriptedModelServer, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from peer_media_server import FOR_BOTH, FOR_MODEL, FOR_USER, PNG, USER_PNG, WAV  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

SERVER = Path(__file__).parent / "fixtures" / "peer_media_server.py"
ALLOW = {"permissions": {"allow": ["mcp__peer"]}}

# Our loop's four wire paths (OpenAI-style and Anthropic, each direct and through LiteLLM), and Claude Code's.
ENGINES: dict[str, Callable[[ScriptedModelServer], dict[str, Any]]] = {
    "openai-direct": lambda m: {},
    "openai-via-litellm": lambda m: {"model_transport": "litellm"},
    "anthropic-direct": lambda m: {"model": "anthropic/claude-scripted", "api_base": m.anthropic_base},
    "anthropic-via-litellm": lambda m: {
        "model": "anthropic/claude-scripted",
        "api_base": m.anthropic_base,
        "model_transport": "litellm",
    },
    # Claude Code reads a result through Overseer's proxy of the server (backend/engine/claude_sdk/proxy.py).
    "claude-sdk": lambda m: {"default_engine": "claude-sdk"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def peer_pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    root = tmp_path_factory.mktemp("peer")
    config = McpServerConfig(command=sys.executable, args=[str(SERVER)], start_timeout=30)
    async with McpPool({"peer": config}, log_dir=root / "logs") as pool:
        await pool.wait_ready(timeout=60)
        yield pool


def host_on(engine: str, root: Path, script: list[Reply], pool: McpPool) -> AbstractAsyncContextManager[Harness]:
    return scripted_host(root, script, pool=pool, for_model=ENGINES[engine], **ALLOW)


def call(tool: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=f"mcp__peer__{tool}", arguments=arguments)])


def stored_rows(h: Harness) -> str:
    with sqlite3.connect(h.host.settings.db_path) as db:
        return " ".join(r[0] for r in db.execute("SELECT data FROM messages UNION ALL SELECT data FROM events"))


@pytest.mark.parametrize("engine", ENGINES)
async def test_an_image_with_structured_content_reaches_the_model_as_the_image_not_as_base64_text(
    tmp_path: Path, peer_pool: McpPool, engine: str
) -> None:
    script = [call("read_media_file", path="shot.png"), Reply(text="A noisy square.")]
    async with host_on(engine, tmp_path, script, peer_pool) as h:
        session = await h.run("show me shot.png", timeout=90)
        assert session.status == "completed", session.error
        request = h.model.requests[-1]
        [image] = request.images()
        assert (image.mime_type, image.data) == ("image/png", PNG)  # byte-identical
        [result] = request.tool_results()
        assert PNG[:40] not in result.text and len(result.text) < 500
        assert PNG[:40] not in str(request.messages).replace(image.data, "")  # only the image carries it
        assert not (h.workspace / SPILL_DIR).exists()  # nothing was cut, so nothing was spilled
        [record] = await h.host.store.list_tool_calls(session.id)
        assert [(m.kind, m.mime_type) for m in record.media] == [("image", "image/png")]
        assert PNG[:40] not in stored_rows(h)  # the structured copy is not kept beside the file
        h.model.assert_all_used()


@pytest.mark.parametrize("engine", ["openai-direct", "anthropic-direct"])
async def test_audio_with_structured_content_reaches_the_model_as_a_short_note(
    tmp_path: Path, peer_pool: McpPool, engine: str
) -> None:
    script = [call("read_audio_file", path="chime.wav"), Reply(text="A chime.")]
    async with host_on(engine, tmp_path, script, peer_pool) as h:
        session = await h.run("play chime.wav", timeout=90)
        assert session.status == "completed", session.error
        request = h.model.requests[-1]
        [result] = request.tool_results()
        assert "[audio (audio/wav, 7.9 KB) returned: the model receives no audio, only this note]" in result.text
        assert len(result.text) < 500 and WAV[:40] not in str(request.messages)
        assert request.images() == []
        assert not (h.workspace / SPILL_DIR).exists()
        [message] = [m for m in await h.host.store.list_messages(session.id) if m.role == "tool"]
        [clip] = message.media  # kept for the person
        assert h.host.media.read_base64(session.id, clip.name) == WAV
        h.model.assert_all_used()


@pytest.mark.parametrize("engine", ENGINES)
async def test_content_for_the_person_alone_never_reaches_the_model_and_is_on_the_tool_card(
    tmp_path: Path, peer_pool: McpPool, engine: str
) -> None:
    async with host_on(engine, tmp_path, [call("annotated"), Reply(text="Done.")], peer_pool) as h:
        session = await h.run("build", timeout=90)
        assert session.status == "completed", session.error
        request = h.model.requests[-1]
        [result] = request.tool_results()
        assert result.text.endswith(f"{FOR_BOTH}\n{FOR_MODEL}")
        assert FOR_USER not in str(request.messages)
        assert request.images() == [] and USER_PNG[:40] not in str(request.messages)

        # The card: what the model read, the model's part marked, then the person's.
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.result.endswith(f"{FOR_BOTH}\n\n{FOR_MODEL_ONLY}\n{FOR_MODEL}\n\n{FOR_USER_ONLY}\n{FOR_USER}")
        [image] = record.media
        assert image.for_user_only and h.host.media.read_base64(session.id, image.name) == USER_PNG
        [message] = [m for m in await h.host.store.list_messages(session.id) if m.role == "tool"]
        assert FOR_USER not in message.content  # the transcript the model is sent later
        h.model.assert_all_used()


async def test_an_image_for_the_person_alone_stays_out_of_every_later_request(tmp_path: Path, peer_pool: McpPool) -> None:
    script = [call("annotated"), call("read_media_file", path="shot.png"), Reply(text="Done.")]
    async with host_on("openai-direct", tmp_path, script, peer_pool) as h:
        session = await h.run("build, then look", timeout=90)
        assert session.status == "completed", session.error
        assert [i.data for i in h.model.requests[-1].images()] == [PNG]
        h.model.assert_all_used()
