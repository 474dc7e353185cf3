"""A server's request to run the model (`sampling/createMessage`) is an approval, then a model call.

A real MCP server process (tests/mcp/fixtures/sampling_server.py, written with the SDK) asks for
a haiku from inside its tool, with a system prompt, a text and an image; the scripted model calls
that tool through the gate and the shared pool, a person answers the sampling approval, and both
the scripted model's request log and the tool's report show what happened. Both protocol eras
(a request mid-call, and one riding the call's InputRequiredResult) and both engines.
No sleeps: every wait is bounded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from backend.domain.session_options import SessionOptions
from backend.domain.errors import Invalid
from backend.domain.models import Decision
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import Harness, scripted_host

from tests.mcp.era_pools import ERAS, era_pools

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOUND = 60  # seconds; a bound on waits, never a timing assertion
SERVER = Path(__file__).parents[1] / "mcp" / "fixtures" / "sampling_server.py"
ALLOW = {"permissions": {"allow": ["mcp__sample"]}}
HAIKU = "Old pond, frog jumps in"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pools(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, McpPool]]:
    """One pool per protocol era, each running the sampling server as a real process."""
    async with era_pools(SERVER, "sample", tmp_path_factory.mktemp("sampling"), bound=BOUND) as made:
        yield made


def script(*, samples: bool = True) -> list[Reply]:
    """The agent calls the tool; the server's sampling request (if it gets that far) is answered; the agent ends."""
    call = Reply(tool_calls=[ScriptedToolCall(name="mcp__sample__haiku", arguments={"topic": "frogs"})])
    return [call, *([Reply(text=HAIKU)] if samples else []), Reply(text="done")]


async def run_answering(h: Harness, decision: Decision | None) -> dict[str, Any]:
    """Start a session, answer its sampling approval with `decision` (None: leave it), and report."""
    session = await h.start("write me a haiku")
    approval = await h.next_approval(timeout=BOUND)
    assert (approval.kind, approval.session_id) == ("sampling", session.id)
    if decision is not None:
        await h.answer(approval, decision)
    session = await h.host.runner.wait(session.id, timeout=BOUND)
    assert session.status == "completed", session.error
    [result] = h.model.requests[-1].tool_results()
    closed = await h.host.store.get_approval(approval.id)
    return {"tool": result.text, "status": closed.status, "session": session, "approval": closed}


def sampling_request(h: Harness):
    """The model request the server's sampling made: the one without tools."""
    [request] = [r for r in h.model.requests if not r.tools]
    return request


@pytest.mark.parametrize("era", ERAS)
async def test_a_sampling_request_is_an_approval_showing_the_servers_prompt_and_limits(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, script(samples=False), pool=pools[era], **ALLOW) as h:
        session = await h.start("write me a haiku")
        approval = await h.next_approval(timeout=BOUND)
        assert (approval.kind, approval.session_id, approval.tool_name) == ("sampling", session.id, "mcp__sample__haiku")
        args = approval.arguments
        assert args["server"] == "sample"
        assert args["model"] == "openai/scripted"
        assert args["system_prompt"] == "You write haiku."
        assert args["messages"][0] == {"role": "user", "type": "text", "text": "A haiku about frogs."}
        assert args["messages"][1]["type"] == "image" and args["messages"][1]["mime_type"] == "image/png"
        assert (args["max_tokens"], args["asked_max_tokens"]) == (4096, 50_000)  # capped by sampling_max_tokens
        assert "sample" in approval.reason
        [running] = await h.host.store.list_tool_calls(session.id)
        assert args["call_id"] == running.id  # the request is tied to the call it came from
        assert (await h.host.store.get_session(session.id)).status == "waiting_approval"
        await h.answer(approval, Decision(kind="deny"))
        await h.host.runner.wait(session.id, timeout=BOUND)


ENGINES = {"litellm": lambda m: {}, "claude-sdk": lambda m: {"default_engine": "claude-sdk"}}


@pytest.mark.parametrize(("era", "engine"), [("legacy", "litellm"), ("modern", "litellm"), ("modern", "claude-sdk")])
async def test_an_allowed_request_runs_the_sessions_model_and_the_server_gets_its_answer(
    tmp_path: Path, pools: dict[str, McpPool], era: str, engine: str
):
    async with scripted_host(tmp_path, script(), pool=pools[era], for_model=ENGINES[engine], **ALLOW) as h:
        seen = await run_answering(h, Decision(kind="allow_once"))
        request = sampling_request(h)
        completed = await h.next_event("sampling.completed", timeout=BOUND)
    assert seen["status"] == "allowed"
    assert json.loads(seen["tool"]) == {"text": HAIKU, "model": "openai/scripted", "role": "assistant"}
    assert request.system == "You write haiku."
    assert request.raw["max_tokens"] == 4096
    assert request.raw["temperature"] == 0.5
    [user] = [m for m in request.messages if m["role"] == "user"]
    assert user["content"][0] == {"type": "text", "text": "A haiku about frogs."}
    assert user["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert completed.data["server"] == "sample" and completed.data["text"] == HAIKU
    assert completed.data["edited"] is False
    assert seen["session"].usage.output_tokens >= completed.data["usage"]["output_tokens"] > 0


async def test_the_person_may_edit_the_prompts_texts_and_lower_max_tokens(tmp_path: Path, pools: dict[str, McpPool]):
    async with scripted_host(tmp_path, script(), pool=pools["legacy"], **ALLOW) as h:
        session = await h.start("write me a haiku")
        approval = await h.next_approval(timeout=BOUND)
        messages = [dict(m) for m in approval.arguments["messages"]]
        messages[0]["text"] = "A haiku about toads."
        edit = {"system_prompt": "You write short haiku.", "messages": messages, "max_tokens": 60}
        await h.answer(approval, Decision(kind="allow_once", updated_arguments=edit))
        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"
        request = sampling_request(h)
        completed = await h.next_event("sampling.completed", timeout=BOUND)
    assert request.system == "You write short haiku."
    assert request.raw["max_tokens"] == 60
    [user] = [m for m in request.messages if m["role"] == "user"]
    assert user["content"][0]["text"] == "A haiku about toads."
    assert completed.data["edited"] is True


async def test_an_edit_beyond_the_texts_is_refused_naming_the_field_and_the_request_stays_open(
    tmp_path: Path, pools: dict[str, McpPool]
):
    async with scripted_host(tmp_path, script(), pool=pools["legacy"], **ALLOW) as h:
        session = await h.start("write me a haiku")
        approval = await h.next_approval(timeout=BOUND)
        messages = approval.arguments["messages"]
        wrong = [
            ({"max_tokens": 5000}, "'max_tokens'"),
            ({"model": "openai/other"}, "'model'"),
            ({"tools": []}, "'tools'"),
            ({"messages": messages[:1]}, "'messages'"),
            ({"messages": [{**messages[0], "role": "assistant"}, messages[1]]}, "'messages.0.role'"),
            ({"messages": [messages[0], {**messages[1], "text": "no image"}]}, "'messages.1.text'"),
        ]
        for edit, field in wrong:
            with pytest.raises(Invalid, match=field):
                await h.answer(approval, Decision(kind="allow_once", updated_arguments=edit))
        for kind in ("allow_session", "allow_always", "cancel"):
            with pytest.raises(Invalid):
                await h.answer(approval, Decision(kind=kind))  # type: ignore[arg-type]
        assert (await h.host.store.get_approval(approval.id)).status == "pending"
        await h.answer(approval, Decision(kind="allow_once"))
        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"


@pytest.mark.parametrize("era", ERAS)
async def test_a_denied_request_never_reaches_the_model_and_the_server_hears_why(
    tmp_path: Path, pools: dict[str, McpPool], era: str
):
    async with scripted_host(tmp_path, script(samples=False), pool=pools[era], **ALLOW) as h:
        seen = await run_answering(h, Decision(kind="deny", message="not today"))
        assert [r for r in h.model.requests if not r.tools] == []
    assert seen["status"] == "denied"
    assert "declined the sampling request: not today" in seen["tool"]


async def test_an_unanswered_request_is_refused_when_the_approval_times_out(tmp_path: Path, pools: dict[str, McpPool]):
    async with scripted_host(tmp_path, script(samples=False), pool=pools["legacy"], approval_timeout=1, **ALLOW) as h:
        seen = await run_answering(h, None)
    assert seen["status"] == "expired"
    assert "Nobody answered the sampling request in time" in seen["tool"]


async def test_sampling_switched_off_in_the_settings_is_refused_without_asking(tmp_path: Path, pools: dict[str, McpPool]):
    async with scripted_host(tmp_path, script(samples=False), pool=pools["legacy"], sampling="deny", **ALLOW) as h:
        session = await h.run("write me a haiku", timeout=BOUND)
        assert await h.host.store.list_approvals(session_id=session.id) == []
        [result] = h.model.requests[-1].tool_results()
    assert session.status == "completed", session.error
    assert "sampling is switched off in Overseer's settings" in result.text


async def test_a_mode_that_denies_sampling_refuses_it_without_asking(tmp_path: Path, pools: dict[str, McpPool]):
    async with scripted_host(tmp_path, script(samples=False), pool=pools["legacy"], **ALLOW) as h:
        modes = h.host.data_dir / "modes"
        modes.mkdir(parents=True, exist_ok=True)
        (modes / "quiet.md").write_text("---\ndescription: no sampling\nsampling: deny\n---\nBe quiet.\n")
        session = await h.run("write me a haiku", SessionOptions(mode="quiet"), timeout=BOUND)
        assert await h.host.store.list_approvals(session_id=session.id) == []
        [result] = h.model.requests[-1].tool_results()
    assert session.status == "completed", session.error
    assert "sampling is switched off in mode 'quiet'" in result.text


async def test_a_request_pending_at_a_restart_is_withdrawn_and_never_reaches_the_model(
    tmp_path: Path, pools: dict[str, McpPool]
):
    async with scripted_host(tmp_path, script(samples=False), pool=pools["legacy"], **ALLOW) as h:
        session = await h.start("write me a haiku")
        approval = await h.next_approval(timeout=BOUND)
    async with scripted_host(tmp_path, [Reply(text="done")], pool=pools["legacy"], **ALLOW) as h:
        assert (await h.host.runner.wait(session.id, timeout=BOUND)).status == "completed"
        closed = await h.host.store.get_approval(approval.id)
        assert await h.host.broker.pending() == []
        assert [r for r in h.model.requests if not r.tools] == []
    assert closed.status == "cancelled"
    assert closed.decision is not None and "restarted" in (closed.decision.message or "")
