"""A client's direct tool calls (backend/app/direct_tools.py): one session per caller and client,
the call and its result in that session's transcript, approvals named while they wait, and
progress as best effort. Real host, real store, real file and shell servers."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from backend.app.direct_tools import DirectTools
from backend.auth import Principal
from backend.domain.models import Decision
from backend.testing.harness import TEST_PERSON, Harness, scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 30.0
ANN = Principal(name="ann", role="approver", kind="api_key")
READ = "mcp__file__read_file"
WRITE = "mcp__file__write_file"


class Notes:
    """Collects a call's progress notes; says when the first one arrived."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str, float | None]] = []
        self.first = asyncio.Event()

    async def __call__(self, progress: float, message: str, total: float | None = None) -> None:
        self.seen.append((progress, message, total))
        self.first.set()


async def ignore(progress: float, message: str, total: float | None = None) -> None:
    return None


def direct(h: Harness) -> DirectTools:
    return h.host.app_services.direct_tools


async def test_calls_of_one_caller_and_client_share_a_session_and_another_client_gets_its_own(tmp_path, pool):
    permissions = {"allow": [READ]}
    async with scripted_host(tmp_path, [], pool=pool, permissions=permissions) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        tools = direct(h)
        with anyio.fail_after(BOUND):
            for _ in range(2):
                await tools.call(READ, {"path": "a.txt"}, caller=ANN, client="Claude Code", progress=ignore)
            await tools.call(READ, {"path": "a.txt"}, caller=ANN, client="Claude Desktop", progress=ignore)
        sessions = await h.host.app_services.sessions.find()
    assert sorted(s.title for s in sessions) == [
        "Tools called from Claude Code (ann)",
        "Tools called from Claude Desktop (ann)",
    ]
    assert {s.origin for s in sessions} == {"mcp"}


async def test_a_call_is_recorded_as_the_call_then_its_result_in_the_callers_session(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool, permissions={"allow": [READ]}) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        with anyio.fail_after(BOUND):
            result = await direct(h).call(READ, {"path": "a.txt"}, caller=ANN, client="c", progress=ignore)
        [session] = await h.host.app_services.sessions.find()
        asked, answered = await h.host.app_services.sessions.messages(session.id)
    assert result.is_error is False and "alpha" in result.text
    assert asked.role == "assistant" and [c.name for c in asked.tool_calls] == [READ]
    assert answered.role == "tool" and answered.tool_call_id == asked.tool_calls[0].id


async def test_a_call_that_asks_names_its_approval_to_the_caller_and_runs_once_allowed(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool) as h:
        notes = Notes()
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                results = []

                async def call() -> None:
                    arguments = {"path": "x.txt", "content": "hi"}
                    results.append(await direct(h).call(WRITE, arguments, caller=ANN, client="c", progress=notes))

                tg.start_soon(call)
                await notes.first.wait()
                [approval] = await h.host.app_services.approvals.pending()
                assert not (h.workspace / "x.txt").exists()
                await h.answer(approval, Decision(kind="allow_once"), by=TEST_PERSON)
    progress, message, total = notes.seen[0]
    assert (progress, total) == (0.0, None)
    assert f"(approval {approval.id})" in message and WRITE in message
    assert results[0].is_error is False
    assert (h.workspace / "x.txt").read_text() == "hi"


async def test_a_progress_note_that_cannot_be_delivered_does_not_fail_the_call(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool) as h:
        failed = asyncio.Event()

        async def gone(progress: float, message: str, total: float | None = None) -> None:
            failed.set()
            raise ConnectionResetError("the client went away")

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                results = []

                async def call() -> None:
                    arguments = {"path": "y.txt", "content": "yes"}
                    results.append(await direct(h).call(WRITE, arguments, caller=ANN, client="c", progress=gone))

                tg.start_soon(call)
                await failed.wait()
                [approval] = await h.host.app_services.approvals.pending()
                await h.answer(approval, Decision(kind="allow_once"), by=TEST_PERSON)
    assert results[0].is_error is False
    assert (h.workspace / "y.txt").read_text() == "yes"


async def test_only_the_pools_tools_are_known_and_listed(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool) as h:
        tools = direct(h)
        with anyio.fail_after(BOUND):
            listed = {t.name for t in await tools.tools()}
            known = [await tools.knows(n) for n in (READ, "mcp__nowhere__read_file", "read_file")]
    assert {READ, WRITE, "mcp__shell__exec"} <= listed
    assert known == [True, False, False]
