"""Memory consolidation (backend/engine/turns/memory.py) against the scripted model: older messages become memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.domain.models import Message, Session, ToolCallRequest
from backend.engine.turns.memory import CONSOLIDATION_PROMPT, read_memory_for_prompt, split_point
from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host
from shared import memory_files

NO_SERVERS = {"builtin_servers": False}
PROMPTS = ["first: my name is Ada", "second: use metric units", "third: plan the trip", "fourth: book it"]


def save_memory(arguments: dict | str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="save_memory", arguments=arguments)], usage=(1000, 50))


GOOD_SAVE = save_memory(
    {
        "history_entry": "On the first day Ada introduced herself and asked for metric units.",
        "new_facts": [
            {"fact": "The person's name is Ada", "section": "People"},
            {"fact": "The person wants metric units"},
        ],
    }
)


async def converse(h: Harness, prompts: list[str]) -> Session:
    """One session, one prompt per run, each run waited for (bounded)."""
    session = await h.run(prompts[0])
    for prompt in prompts[1:]:
        await h.host.runner.send(session.id, prompt)
        session = await h.host.runner.wait(session.id, timeout=30)
    return session


def wire_text(request: ModelRequest) -> str:
    return json.dumps(request.messages[1:])  # the conversation, without the system prompt


async def test_a_session_past_its_window_consolidates_older_messages_into_memory(tmp_path: Path) -> None:
    answers = [Reply(text=f"answer {i}", usage=(10, 5)) for i in range(3)]
    script = [
        *answers,
        GOOD_SAVE,
        Reply(text="booked", usage=(10, 5)),
        Reply(text="fifth answer", usage=(10, 5)),
    ]
    async with scripted_host(tmp_path, script, memory_window=6, **NO_SERVERS) as h:
        session = await converse(h, [*PROMPTS, "fifth: thanks"])
        assert session.status == "completed"
        h.model.assert_all_used()
        consolidation, after, later = h.model.requests[3:]

        # The model was asked to consolidate the two oldest turns, and only those.
        assert consolidation.system == CONSOLIDATION_PROMPT and consolidation.tool_names == ["save_memory"]
        transcript = wire_text(consolidation)
        assert all(text in transcript for text in (PROMPTS[0], "answer 0", PROMPTS[1], "answer 1"))
        assert PROMPTS[2] not in transcript and PROMPTS[3] not in transcript

        # The memory files hold what it answered.
        history = memory_files.history_path(h.workspace).read_text()
        assert "Ada introduced herself and asked for metric units" in history
        memory = memory_files.memory_path(h.workspace).read_text()
        assert "## People\n\n- The person's name is Ada <!-- id:" in memory
        assert "- The person wants metric units <!-- id:" in memory

        # The next request carries MEMORY.md in the system prompt and no longer the old messages.
        assert "Long-term memory (memory/MEMORY.md):" in (after.system or "")
        assert "The person's name is Ada" in (after.system or "")
        for request in (after, later):
            assert PROMPTS[0] not in wire_text(request) and "answer 1" not in wire_text(request)
            assert PROMPTS[2] in wire_text(request) and "answer 2" in wire_text(request)

        stored = await h.host.store.get_session(session.id)
        assert stored.memory_from == 4
        assert (stored.usage.input_tokens, stored.usage.output_tokens) == (5 * 10 + 1000, 5 * 5 + 50)
        events = [e for e in await h.host.store.list_events(session.id) if e.type == "memory.consolidated"]
        assert [e.data for e in events] == [{"upto": 4, "facts": 2}]


@pytest.mark.parametrize(
    "bad_reply",
    [
        Reply(text="I would rather not summarise."),
        save_memory("<<not json>>"),
        save_memory({"new_facts": [{"fact": "no history entry"}]}),
        save_memory({"history_entry": "   ", "new_facts": []}),
        save_memory({"history_entry": "ok", "new_facts": "not a list"}),
        Reply(status=400, text="context too long"),
    ],
    ids=["no-call", "broken-json", "missing-entry", "blank-entry", "bad-facts", "model-error"],
)
async def test_a_failed_consolidation_leaves_history_intact_and_the_session_completes(
    tmp_path: Path, bad_reply: Reply
) -> None:
    script = [*(Reply(text=f"answer {i}") for i in range(3)), bad_reply, Reply(text="booked")]
    async with scripted_host(tmp_path, script, memory_window=6, model_retries=0, **NO_SERVERS) as h:
        session = await converse(h, PROMPTS)
        assert session.status == "completed" and session.error is None
        h.model.assert_all_used()
        assert all(text in wire_text(h.model.requests[-1]) for text in (PROMPTS[0], "answer 0", PROMPTS[3]))
        assert (await h.host.store.get_session(session.id)).memory_from == 0
        assert not memory_files.history_path(h.workspace).exists() and not memory_files.memory_path(h.workspace).exists()
        events = await h.host.store.list_events(session.id)
        assert not any(e.type in ("memory.consolidated", "error") for e in events)


async def test_a_window_of_zero_never_consolidates(tmp_path: Path) -> None:
    script = [Reply(text=f"answer {i}") for i in range(4)]
    async with scripted_host(tmp_path, script, memory_window=0, **NO_SERVERS) as h:
        session = await converse(h, PROMPTS)
        assert len(h.model.requests) == 4
        assert PROMPTS[0] in wire_text(h.model.requests[-1])
        assert session.memory_from == 0


async def test_memory_written_by_hand_reaches_the_system_prompt(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="hi")], **NO_SERVERS) as h:
        memory_files.save_facts(h.workspace, [("The person is called Grace", None)])
        await h.run("hello")
        assert "The person is called Grace" in (h.model.requests[0].system or "")


async def test_without_memory_the_system_prompt_has_no_memory_section(tmp_path: Path) -> None:
    async with scripted_host(tmp_path, [Reply(text="hi")], **NO_SERVERS) as h:
        await h.run("hello")
        assert "Long-term memory" not in (h.model.requests[0].system or "")


# ---------------------------------------------------------------- choosing the cut


def msg(idx: int, role: str, *, calls: tuple[str, ...] = (), answers: str | None = None) -> Message:
    return Message(
        session_id="s",
        idx=idx,
        role=role,  # type: ignore[arg-type]
        content=f"{role} {idx}",
        tool_calls=[ToolCallRequest(id=c, name="t") for c in calls],
        tool_call_id=answers,
    )


def turns(count: int) -> list[Message]:
    return [msg(i, "user" if i % 2 == 0 else "assistant") for i in range(count)]


def test_no_cut_within_the_window() -> None:
    assert split_point(turns(6), window=6) is None


def test_the_cut_keeps_about_half_the_window_and_starts_with_a_user_message() -> None:
    assert split_point(turns(11), window=6) == 8
    assert split_point(turns(7), window=6) == 4


def test_the_cut_never_separates_a_tool_call_from_its_result() -> None:
    # A user message arrived while tool c1 ran: its result comes after that message.
    active = [
        msg(0, "user"),
        msg(1, "assistant", calls=("c1",)),
        msg(2, "user"),
        msg(3, "tool", answers="c1"),
        msg(4, "assistant"),
        msg(5, "user"),
        msg(6, "assistant"),
    ]
    assert split_point(active, window=4) == 5


def test_a_call_without_a_result_blocks_every_later_cut() -> None:
    active = [msg(0, "user"), msg(1, "assistant", calls=("c1",)), msg(2, "user"), msg(3, "user")]
    assert split_point(active, window=2) is None


def test_with_no_older_cut_the_nearest_newer_one_is_taken() -> None:
    long_turn = [msg(0, "user")] + [msg(i, "assistant") for i in range(1, 9)] + [msg(9, "user")]
    assert split_point(long_turn, window=6) == 9


def test_memory_for_the_prompt_is_capped_at_a_line(tmp_path: Path) -> None:
    memory_files.save_facts(tmp_path, [(f"Fact number {i} with some padding text", None) for i in range(50)])
    capped = read_memory_for_prompt(tmp_path, limit=500)
    body, note = capped.rsplit("\n", 1)
    assert len(body.encode()) <= 500 and body in memory_files.memory_path(tmp_path).read_text()
    assert "continues beyond 500 bytes" in note
    assert read_memory_for_prompt(tmp_path / "nowhere") == ""
