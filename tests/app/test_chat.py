"""Chat input (backend/app/chat.py): commands, `/skill` attachments, context paths and images,
each checked at the scripted model's request."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path

import pytest

from backend.domain.session_options import SessionOptions
from backend.app.chat import ChatInput, ImageInput
from backend.engine.turns.context import ContextError
from backend.engine.runner import SessionBusy
from backend.testing import ModelRequest, Reply
from backend.testing.harness import Harness, scripted_host

NO_SERVERS = {"builtin_servers": False}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def add_skill(h: Harness, name: str, body: str, *, requires: str = "") -> None:
    folder = h.host.data_dir / "skills" / name
    folder.mkdir(parents=True)
    extra = f"requires:\n  bins: {requires}\n" if requires else ""
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} skill\n{extra}---\n{body}\n")


async def send(h: Harness, session_id: str, text: str, **extras: object):  # noqa: ANN201
    result = await h.host.chat.submit(session_id, ChatInput(text=text, **extras))  # type: ignore[arg-type]
    await h.host.runner.wait(session_id, timeout=30)
    return result


async def test_a_leading_skill_name_attaches_the_skill_and_is_not_sent_as_text(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="reviewed")], **NO_SERVERS) as h:
        add_skill(h, "house-style", "Use British spelling.")
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        result = await send(h, session.id, "/house-style check README.md")
        assert result.attached_skills == ["house-style"]
        prompt = h.model.requests[0].last_prompt()
        assert prompt.startswith("check README.md")
        assert "Use British spelling." in prompt and '<skill name="house-style"' in prompt


async def test_an_attached_skill_that_is_unavailable_is_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        add_skill(h, "needs-tool", "Run it.", requires="no-such-binary-xyz")
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        with pytest.raises(ValueError, match="no-such-binary-xyz"):
            await h.host.chat.submit(session.id, ChatInput(text="go", attached_skills=["needs-tool"]))
        assert await h.host.store.list_messages(session.id) == []


async def test_a_leading_slash_word_that_is_neither_command_nor_skill_is_refused_with_the_choices(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        with pytest.raises(ValueError, match=r"/frobnicate is not a command or a skill\. Commands: /new, /help, /mode"):
            await h.host.chat.submit(session.id, ChatInput(text="/frobnicate now"))
        # A path is not a command: it goes to the model as text.
        assert (await h.host.chat.submit(session.id, ChatInput(text="/etc/hosts: what is it?"))).idx == 0


async def test_new_clears_what_the_model_sees_but_keeps_the_transcript(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="one"), Reply(text="two")], **NO_SERVERS) as h:
        session = await h.run("remember the word apple")
        result = await h.host.chat.submit(session.id, ChatInput(text="/new"))
        assert result.command == "new" and "cleared" in result.detail
        await send(h, session.id, "what was the word?")
        seen = json.dumps(h.model.requests[1].messages)
        assert "apple" not in seen and "what was the word?" in seen
        assert len(await h.host.store.list_messages(session.id)) == 4


async def test_new_is_refused_while_the_session_runs(tmp_path: Path) -> None:
    release = threading.Event()

    def slow_model(_request: ModelRequest) -> Reply:
        release.wait(timeout=10)
        return Reply(text="finally")

    async with scripted_host(tmp_path, slow_model, **NO_SERVERS) as h:
        session = await h.start("take your time")
        try:
            with pytest.raises(SessionBusy, match="stop it before /new"):
                await h.host.chat.submit(session.id, ChatInput(text="/new"))
        finally:
            release.set()
        assert (await h.host.runner.wait(session.id, timeout=30)).memory_from == 0


async def test_mode_switches_the_session_and_the_next_request_uses_that_mode(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="a"), Reply(text="b")], **NO_SERVERS) as h:
        session = await h.run("hello")
        result = await h.host.chat.submit(session.id, ChatInput(text="/mode ask"))
        assert result.command == "mode" and (await h.host.store.get_session(session.id)).mode == "ask"
        await send(h, session.id, "and now?")
        assert "Mode: ask" in (h.model.requests[1].system or "")
        with pytest.raises(LookupError, match="unknown mode 'nope'"):
            await h.host.chat.submit(session.id, ChatInput(text="/mode nope"))


async def test_help_lists_commands_modes_and_skills_without_calling_the_model(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        add_skill(h, "house-style", "x")
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        result = await h.host.chat.submit(session.id, ChatInput(text="/help"))
        assert "/mode NAME" in result.detail and "plan:" in result.detail and "/house-style" in result.detail
        assert h.model.requests == []
        notices = [e for e in await h.host.bus.replay(session.id, 0) if e.type == "notice"]
        assert notices and notices[-1].data["command"] == "help"


async def test_context_paths_and_images_reach_the_model_as_content(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="seen")], **NO_SERVERS) as h:
        (h.workspace / "src" / "pkg").mkdir(parents=True)
        (h.workspace / "src" / "pkg" / "mod.py").write_text("print('hi')\n")
        (h.workspace / "notes.md").write_text("Remember the milk.\n")
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        image = ImageInput(name="shot.png", data=PNG, mime_type="image/png")
        await send(h, session.id, "look", context_paths=["notes.md", "src"], images=[image])
        [content] = [m["content"] for m in h.model.requests[0].messages if m["role"] == "user"]
        text = content[0]["text"]
        assert '<file path="notes.md">\nRemember the milk.' in text
        assert '<directory path="src"' in text and "  mod.py" in text
        assert content[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}


async def test_a_context_path_outside_the_workspace_is_refused_precisely(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [], **NO_SERVERS) as h:
        session = await h.host.runner.create(options=SessionOptions(title="t"))
        with pytest.raises(ContextError, match=r"context path '\.\./secret' is outside the workspace"):
            await h.host.chat.submit(session.id, ChatInput(text="x", context_paths=["../secret"]))
        assert await h.host.store.list_messages(session.id) == []
