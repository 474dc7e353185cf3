"""The gateway's MCP server in process (backend/gateway/server.py): tools, approvals, eras, roles.

`mode="legacy"` is the handshake era (elicitation sent mid-call); `mode="auto"` negotiates
2026-07-28 (elicitation through InputRequiredResult rounds). Both are what real clients speak.
"""

from __future__ import annotations

import anyio
import mcp_types as wire
import pytest
from gateway_testkit import BOUND, HeldReply, ProgressLog, accept, session_status, write_file
from mcp import Client

from backend.auth import Principal
from backend.domain.models import Decision
from backend.gateway import Gateway, build_server
from backend.gateway.callers import LOCAL_ADMIN
from backend.testing import Reply
from backend.testing.harness import scripted_host

ERAS = ["legacy", "auto"]

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.mark.parametrize("mode", ERAS)
async def test_invoke_agent_returns_the_answer_with_session_id_status_cost_and_tokens(tmp_path, mode, pool):
    async with scripted_host(tmp_path, [Reply(text="forty-two", usage=(120, 7))], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "what is the answer?"})
        assert result.is_error is False
        assert result.content[0].text == "forty-two"
        structured = result.structured_content
        assert (structured["status"], structured["response"]) == ("completed", "forty-two")
        assert structured["tokens"] == {"input": 120, "output": 7}
        session = await h.host.store.get_session(structured["session_id"])
        assert (session.origin, session.title) == ("mcp", "what is the answer?")


@pytest.mark.parametrize("mode", ERAS)
async def test_invoke_agent_reports_progress_while_the_agent_works(tmp_path, mode, pool):
    async with scripted_host(
        tmp_path, [write_file(), Reply(text="done")], pool=pool, permissions={"allow": ["mcp__file__*"]}
    ) as h:
        progress = ProgressLog()
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND):
                await client.call_tool("invoke_agent", {"prompt": "write"}, progress_callback=progress)
        assert progress.notes == [
            "the model calls mcp__file__write_file",
            "running mcp__file__write_file",
            "mcp__file__write_file done",
            "the model answered",
        ]


async def test_an_approval_answered_with_answer_approval_lets_the_tool_run(tmp_path, pool):
    async with scripted_host(tmp_path, [write_file(), Reply(text="written")], pool=pool) as h:
        server = build_server(Gateway(h.host.app_services))
        progress = ProgressLog()
        async with (
            Client(server, mode="legacy") as invoker,
            Client(server, mode="legacy") as approver,
            anyio.create_task_group() as tg,
        ):
            results: list[wire.CallToolResult] = []

            async def invoke() -> None:
                results.append(
                    await invoker.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
                )

            tg.start_soon(invoke)
            approval_id = await progress.approval()
            pending = await approver.call_tool("list_pending_approvals", {})
            assert [a["id"] for a in pending.structured_content["approvals"]] == [approval_id]
            answered = await approver.call_tool(
                "answer_approval", {"id": approval_id, "decision": "allow_once"}
            )
            assert answered.structured_content["status"] == "allowed"
        assert results[0].content[0].text == "written"
        assert (h.workspace / "x.txt").read_text() == "hi"


@pytest.mark.parametrize("mode", ERAS)
async def test_an_elicitation_answer_allows_the_call_inside_the_invoked_agent(tmp_path, mode, pool):
    asked: list[str] = []

    async def answer(context, params):
        asked.append(params.message)
        return accept("allow_once")

    async with scripted_host(tmp_path, [write_file(), Reply(text="written")], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode, elicitation_callback=answer) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
        assert result.content[0].text == "written"
        assert (h.workspace / "x.txt").read_text() == "hi"
        assert len(asked) == 1 and "mcp__file__write_file" in asked[0] and '"x.txt"' in asked[0]
        (approval,) = await h.host.store.list_approvals()
        assert (approval.status, approval.decided_by) == ("allowed", "user")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_declined_elicitation_denies_the_call_and_the_agent_is_told(tmp_path, mode, pool):
    async def decline(context, params):
        return wire.ElicitResult(action="decline")

    async with scripted_host(tmp_path, [write_file(), Reply(text="could not write")], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode, elicitation_callback=decline) as client:
            with anyio.fail_after(BOUND):
                result = await client.call_tool("invoke_agent", {"prompt": "w"})
        assert result.content[0].text == "could not write"
        assert not (h.workspace / "x.txt").exists()
        assert "denied" in h.model.requests[-1].last_tool_results()[0]


async def test_a_dashboard_answer_withdraws_the_clients_prompt(tmp_path, pool):
    prompted = anyio.Event()
    withdrawn = anyio.Event()
    never = anyio.Event()

    async def wait_for_a_person(context, params):
        prompted.set()
        try:
            await never.wait()
        finally:
            withdrawn.set()
        return accept("deny")

    held = HeldReply(Reply(text="written"))
    async with scripted_host(tmp_path, [write_file(), held], pool=pool) as h:
        async with (
            Client(build_server(Gateway(h.host.app_services)), mode="legacy", elicitation_callback=wait_for_a_person) as c,
            anyio.create_task_group() as tg,
        ):
            results: list[wire.CallToolResult] = []

            async def invoke() -> None:
                results.append(await c.call_tool("invoke_agent", {"prompt": "w"}))

            tg.start_soon(invoke)
            with anyio.fail_after(BOUND):
                await prompted.wait()
                (pending,) = await h.host.broker.pending()
                await h.host.broker.answer(pending.id, Decision(kind="allow_once"))  # the dashboard's path
                await withdrawn.wait()
                assert results == []  # withdrawn by the answer, not by the run ending
                held.released.set()
        assert results[0].content[0].text == "written"
        assert (h.workspace / "x.txt").read_text() == "hi"


async def test_a_late_client_answer_is_ignored_once_the_dashboard_answered(tmp_path, pool):
    # 2026-07-28 cannot withdraw a question already handed over: the late answer must not count.
    prompted = anyio.Event()
    release = anyio.Event()

    async def answer_late(context, params):
        prompted.set()
        await release.wait()
        return accept("deny", "too late")

    async with scripted_host(tmp_path, [write_file(), Reply(text="written")], pool=pool) as h:
        async with (
            Client(build_server(Gateway(h.host.app_services)), mode="auto", elicitation_callback=answer_late) as client,
            anyio.create_task_group() as tg,
        ):
            results: list[wire.CallToolResult] = []

            async def invoke() -> None:
                results.append(await client.call_tool("invoke_agent", {"prompt": "w"}))

            tg.start_soon(invoke)
            with anyio.fail_after(BOUND):
                await prompted.wait()
                (pending,) = await h.host.broker.pending()
                await h.host.broker.answer(pending.id, Decision(kind="allow_once"))
                await session_status(h.host, pending.session_id, "completed")
            release.set()
        assert results[0].content[0].text == "written"
        approval = await h.host.store.get_approval(pending.id)
        assert approval.decision is not None and approval.decision.kind == "allow_once"


@pytest.mark.parametrize("mode", ERAS)
async def test_cancelling_invoke_agent_stops_the_session_and_its_approval(tmp_path, mode, pool):
    async with scripted_host(tmp_path, [write_file()], pool=pool) as h:
        progress = ProgressLog()
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:

                    async def invoke() -> None:
                        await client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)

                    tg.start_soon(invoke)
                    approval_id = await progress.approval()
                    tg.cancel_scope.cancel()
                approval = await h.host.store.get_approval(approval_id)
                assert await session_status(h.host, approval.session_id, "stopped") == "stopped"
        assert (await h.host.store.get_approval(approval_id)).status == "cancelled"
        assert not (h.workspace / "x.txt").exists()


async def test_invoke_agent_continues_a_finished_session_with_its_history(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(text="noted 42"), Reply(text="it was 42")], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode="legacy") as client:
            with anyio.fail_after(BOUND):
                first = await client.call_tool("invoke_agent", {"prompt": "remember 42"})
                session_id = first.structured_content["session_id"]
                second = await client.call_tool(
                    "invoke_agent", {"prompt": "what was it?", "session_id": session_id}
                )
        assert second.structured_content["session_id"] == session_id
        sent = [m.get("content") for m in h.model.requests[-1].messages if m["role"] != "system"]
        assert sent == ["remember 42", "noted 42", "what was it?"]
        # The caller owns the session and wrote both prompts (auto-approve covers only its owner's turns).
        caller = LOCAL_ADMIN.decider("mcp")
        assert (await h.host.store.get_session(session_id)).created_by == caller
        authors = [m.author for m in await h.host.store.list_messages(session_id) if m.role == "user"]
        assert authors == [caller, caller]


async def test_list_sessions_and_get_session_show_what_an_invoked_agent_did(tmp_path, pool):
    async with scripted_host(tmp_path, [Reply(text="hello there")], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode="legacy") as client:
            with anyio.fail_after(BOUND):
                invoked = await client.call_tool("invoke_agent", {"prompt": "say hello"})
                session_id = invoked.structured_content["session_id"]
                listed = await client.call_tool("list_sessions", {"status": "completed"})
                running = await client.call_tool("list_sessions", {"status": "running"})
                detail = await client.call_tool("get_session", {"id": session_id, "last_n": 1})
                missing = await client.call_tool("get_session", {"id": "nope"})
        assert [s["id"] for s in listed.structured_content["sessions"]] == [session_id]
        assert running.structured_content["sessions"] == []
        assert detail.structured_content["session"]["status"] == "completed"
        assert [(m["role"], m["content"]) for m in detail.structured_content["messages"]] == [
            ("assistant", "hello there")
        ]
        assert missing.is_error is True


async def test_answer_approval_refuses_an_unknown_or_already_answered_approval(tmp_path, pool):
    async with scripted_host(tmp_path, [write_file(), Reply(text="ok")], pool=pool) as h:
        server = build_server(Gateway(h.host.app_services))
        progress = ProgressLog()
        async with (
            Client(server, mode="legacy") as invoker,
            Client(server, mode="legacy") as other,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(
                lambda: invoker.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
            )
            approval_id = await progress.approval()
            first = await other.call_tool("answer_approval", {"id": approval_id, "decision": "deny"})
            second = await other.call_tool("answer_approval", {"id": approval_id, "decision": "allow_once"})
            unknown = await other.call_tool("answer_approval", {"id": "f" * 32, "decision": "allow_once"})
        assert (first.is_error, second.is_error, unknown.is_error) == (False, True, True)
        # The refusal (an ApprovalClosed, a domain error) reaches the client with its reason.
        assert f"approval {approval_id} is already denied" in second.content[0].text
        assert (await h.host.store.get_approval(approval_id)).status == "denied"
        assert not (h.workspace / "x.txt").exists()


async def test_a_viewer_may_read_but_not_invoke_or_answer(tmp_path, pool):
    viewer = Principal(name="val", role="viewer", kind="user")
    async with scripted_host(tmp_path, [], pool=pool) as h:
        gateway = Gateway(h.host.app_services, caller=lambda ctx: viewer)
        async with Client(build_server(gateway), mode="legacy") as client:
            listed = await client.call_tool("list_sessions", {})
            invoked = await client.call_tool("invoke_agent", {"prompt": "do something"})
            answered = await client.call_tool("answer_approval", {"id": "a" * 32, "decision": "allow_once"})
        assert listed.is_error is False
        assert (invoked.is_error, answered.is_error) == (True, True)
        assert await h.host.store.list_sessions() == []
        assert h.model.requests == []


async def test_an_unknown_mode_is_an_error_result_and_starts_nothing(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode="legacy") as client:
            result = await client.call_tool("invoke_agent", {"prompt": "x", "mode": "no-such-mode"})
        assert result.is_error is True
        assert await h.host.store.list_sessions() == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_mcp_servers_question_inside_the_invoked_agent_is_put_to_the_client_as_it_asked_it(tmp_path, mode):
    import json
    import sys
    from pathlib import Path

    from backend.mcp.config import McpServerConfig
    from backend.mcp.pool import McpPool
    from backend.testing import ScriptedToolCall

    server = Path(__file__).parents[1] / "mcp" / "fixtures" / "elicitation_server.py"
    config = McpServerConfig(command=sys.executable, args=[str(server), "--legacy"], start_timeout=BOUND)
    booking = {"name": "Ada", "seats": 2, "vip": False, "meal": "veg"}
    asked: list[tuple[str, dict]] = []

    async def fill_in(context, params):
        asked.append((params.message, params.requested_schema))
        return wire.ElicitResult(action="accept", content=booking)

    script = [Reply(tool_calls=[ScriptedToolCall(name="mcp__ask__book", arguments={})]), Reply(text="booked")]
    async with McpPool({"ask": config}, log_dir=tmp_path / "logs") as ask_pool:
        await ask_pool.wait_ready(timeout=BOUND)
        async with scripted_host(tmp_path, script, pool=ask_pool, permissions={"allow": ["mcp__ask"]}) as h:
            async with Client(build_server(Gateway(h.host.app_services)), mode=mode, elicitation_callback=fill_in) as client:
                with anyio.fail_after(BOUND):
                    result = await client.call_tool("invoke_agent", {"prompt": "book a table"})
            assert result.content[0].text == "booked"
            [(message, schema)] = asked
            assert "Booking a table: who is it for, and how many seats?" in message
            assert schema["properties"]["meal"]["enum"] == ["veg", "fish", "meat"]
            [tool_result] = h.model.requests[-1].tool_results()
            assert json.loads(tool_result.text) == {"action": "accept", "content": booking}
            (approval,) = await h.host.store.list_approvals()
            assert (approval.kind, approval.status, approval.decider.via) == ("elicitation", "allowed", "elicitation")


@pytest.mark.parametrize("mode", ERAS)
async def test_an_mcp_servers_sampling_request_inside_the_invoked_agent_is_put_to_the_client_with_its_prompt(
    tmp_path, mode
):
    import json
    import sys
    from pathlib import Path

    from backend.mcp.config import McpServerConfig
    from backend.mcp.pool import McpPool
    from backend.testing import ScriptedToolCall

    server = Path(__file__).parents[1] / "mcp" / "fixtures" / "sampling_server.py"
    config = McpServerConfig(command=sys.executable, args=[str(server), "--legacy"], start_timeout=BOUND)
    asked: list[str] = []

    async def allow_for_session(context, params):
        asked.append(params.message)
        return accept("allow_session")  # a sampling request is run once, whatever the client chose

    call = Reply(tool_calls=[ScriptedToolCall(name="mcp__sample__haiku", arguments={"topic": "frogs"})])
    script = [call, Reply(text="Old pond"), Reply(text="done")]
    async with McpPool({"sample": config}, log_dir=tmp_path / "logs") as sample_pool:
        await sample_pool.wait_ready(timeout=BOUND)
        async with scripted_host(tmp_path, script, pool=sample_pool, permissions={"allow": ["mcp__sample"]}) as h:
            async with Client(build_server(Gateway(h.host.app_services)), mode=mode, elicitation_callback=allow_for_session) as client:
                with anyio.fail_after(BOUND):
                    result = await client.call_tool("invoke_agent", {"prompt": "a haiku"})
            assert result.content[0].text == "done"
            [message] = asked
            assert "asks to run the model 'openai/scripted'" in message
            assert "[system] You write haiku." in message and "[user] A haiku about frogs." in message
            [tool_result] = h.model.requests[-1].tool_results()
            assert json.loads(tool_result.text)["text"] == "Old pond"
            (approval,) = await h.host.store.list_approvals()
            assert (approval.kind, approval.status, approval.decision.kind) == ("sampling", "allowed", "allow_once")


async def test_answer_approval_sent_again_the_same_way_returns_the_approval_as_decided(tmp_path, pool):
    # Issue 31, item 12: a client whose connection dropped before the result came back retries.
    async with scripted_host(tmp_path, [write_file(), Reply(text="ok")], pool=pool) as h:
        server = build_server(Gateway(h.host.app_services))
        progress = ProgressLog()
        async with (
            Client(server, mode="legacy") as invoker,
            Client(server, mode="legacy") as other,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(
                lambda: invoker.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=progress)
            )
            approval_id = await progress.approval()
            answer = {"id": approval_id, "decision": "deny", "message": "not now"}
            first = await other.call_tool("answer_approval", answer)
            again = await other.call_tool("answer_approval", answer)
            changed = await other.call_tool("answer_approval", {**answer, "message": "never"})
        assert (first.is_error, again.is_error, changed.is_error) == (False, False, True)
        assert again.structured_content == first.structured_content
        assert "answered deny (not now)" in changed.content[0].text
        assert not (h.workspace / "x.txt").exists()
