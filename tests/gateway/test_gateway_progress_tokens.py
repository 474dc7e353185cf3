"""Issue 35, item 9: over stdio, progress goes only with the token the client sent, and a call
waiting on a person stays connected until it is answered.

The real `mcp` Client talks to `overseer mcp` (an embedded host, and the bridge to a running
host) as a subprocess, in both protocol eras. A tap on the client's transport records every
message the gateway writes, so "no progress at all" and "only under this token" are read off the
wire, not off the client's callbacks (which drop what they cannot match). The gateway's
heartbeat is shortened so a wait spans several of them without the test waiting 30 s per beat.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as wire
import pytest
from gateway_testkit import BOUND, embedded_env, served_app, stdio_params, write_file
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage

from backend.gateway import invocation
from backend.testing import Reply, ScriptedModelServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

HEARTBEATS = 3
"""Heartbeats a waiting call must outlive: more than one proves the wait went past the first."""
FAST_HEARTBEAT = "0.05"


@dataclass
class Wire:
    """What crossed the client's transport: its requests out, the gateway's messages in."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    heartbeats: int = 0
    _waited: anyio.Event = field(default_factory=anyio.Event)

    def progress(self) -> list[dict[str, Any]]:
        return [m["params"] for m in self.received if m.get("method") == "notifications/progress"]

    def token_of(self, tool: str) -> Any:
        (call,) = [m for m in self.sent if m.get("method") == "tools/call" and m["params"]["name"] == tool]
        return (call["params"].get("_meta") or {}).get("progressToken")

    def saw(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        note = str((message.get("params") or {}).get("message") or "")
        if message.get("method") == "notifications/progress" and note.startswith("still waiting for approval"):
            self.heartbeats += 1
            if self.heartbeats >= HEARTBEATS:
                self._waited.set()

    async def outlived_heartbeats(self) -> None:
        with anyio.fail_after(BOUND):
            await self._waited.wait()


def _dump(item: SessionMessage) -> dict[str, Any]:
    return item.message.model_dump(by_alias=True, exclude_none=True, mode="json")


@asynccontextmanager
async def tapped(params: StdioServerParameters, tap: Wire) -> AsyncIterator[Any]:
    """`stdio_client(params)`, recording every message both ways."""
    async with stdio_client(params) as (read, write):
        inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](64)

        async def pump_in() -> None:
            async with inbound_send:
                async for item in read:
                    if not isinstance(item, Exception):
                        tap.saw(_dump(item))
                    await inbound_send.send(item)

        async def pump_out() -> None:
            async for item in outbound_receive:
                tap.sent.append(_dump(item))
                await write.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            try:
                yield inbound, outbound
            finally:
                tg.cancel_scope.cancel()


async def pending_approval(client: Client) -> str:
    """The id of the first pending approval; each round trip is the wait, the bound ends it."""
    with anyio.fail_after(BOUND):
        while not (found := (await client.call_tool("list_pending_approvals", {})).structured_content["approvals"]):
            pass
    return found[0]["id"]


@asynccontextmanager
async def gateway(kind: str, tmp_path, pool, script: list[Reply]) -> AsyncIterator[StdioServerParameters]:
    """`overseer mcp` with an embedded host, or bridged to a running one, with fast heartbeats."""
    if kind == "embedded":
        with ScriptedModelServer(script) as model:
            env = embedded_env(tmp_path, model) | {"OVERSEER_MCP_HEARTBEAT_SECONDS": FAST_HEARTBEAT}
            yield stdio_params(["mcp"], env)
        return
    with pytest.MonkeyPatch.context() as patch:
        # The bridged host runs in this process: its gateway reads the heartbeat from the module.
        patch.setattr(invocation, "HEARTBEAT_SECONDS", float(FAST_HEARTBEAT))
        async with served_app(tmp_path, script, pool=pool) as served:
            env = embedded_env(tmp_path / "client", served.model) | {"OVERSEER_TOKEN": served.token}
            yield stdio_params(["mcp", "--host-url", served.url], env)


@pytest.mark.parametrize("kind", ["embedded", "bridge"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_without_a_progress_token_gets_no_progress_notification(tmp_path, pool, mode, kind):
    tap = Wire()
    async with gateway(kind, tmp_path, pool, [write_file(), Reply(text="wrote x.txt")]) as params:
        async with Client(tapped(params, tap), mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def invoke() -> None:
                        results.append(await client.call_tool("invoke_agent", {"prompt": "w"}))

                    tg.start_soon(invoke)
                    approval_id = await pending_approval(client)
                    await client.call_tool("answer_approval", {"id": approval_id, "decision": "allow_once"})
    assert tap.token_of("invoke_agent") is None
    assert results[0].structured_content["status"] == "completed"
    assert tap.progress() == []


@pytest.mark.parametrize("kind", ["embedded", "bridge"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_waiting_on_an_approval_stays_connected_and_every_progress_carries_its_token(
    tmp_path, pool, mode, kind
):
    tap = Wire()
    heard: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message or "")

    async with gateway(kind, tmp_path, pool, [write_file(), Reply(text="wrote x.txt")]) as params:
        async with Client(tapped(params, tap), mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def invoke() -> None:
                        results.append(
                            await client.call_tool("invoke_agent", {"prompt": "w"}, progress_callback=on_progress)
                        )

                    tg.start_soon(invoke)
                    # The call waits through several heartbeats, then a person answers.
                    await tap.outlived_heartbeats()
                    approval_id = await pending_approval(client)
                    await client.call_tool("answer_approval", {"id": approval_id, "decision": "allow_once"})
                # Still connected after the call: the same client goes on working.
                listed = await client.call_tool("list_sessions", {})
    token = tap.token_of("invoke_agent")
    assert token is not None
    notes = tap.progress()
    assert len(notes) > HEARTBEATS
    assert {n["progressToken"] for n in notes} == {token}
    assert [n["progress"] for n in notes] == sorted({n["progress"] for n in notes})  # each one grows
    assert len(heard) == len(notes)  # the client matched every one to its call
    assert results[0].structured_content["status"] == "completed"
    assert results[0].content[0].text == "wrote x.txt"
    assert len(listed.structured_content["sessions"]) == 1


@pytest.mark.parametrize("with_token", [False, True])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_exposed_tool_call_gets_progress_only_under_the_token_it_gave(tmp_path, mode, with_token):
    tap = Wire()
    heard: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message or "")

    with ScriptedModelServer([]) as model:
        params = stdio_params(["mcp", "--expose-tools"], embedded_env(tmp_path, model))
        async with Client(tapped(params, tap), mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    results: list[wire.CallToolResult] = []

                    async def call() -> None:
                        extra = {"progress_callback": on_progress} if with_token else {}
                        results.append(
                            await client.call_tool("mcp__shell__exec", {"command": "echo gated > out.txt"}, **extra)
                        )

                    tg.start_soon(call)
                    approval_id = await pending_approval(client)
                    await client.call_tool("answer_approval", {"id": approval_id, "decision": "allow_once"})
    assert results[0].is_error is False
    assert (tmp_path / "workspace" / "out.txt").read_text().strip() == "gated"
    token = tap.token_of("mcp__shell__exec")
    notes = tap.progress()
    if with_token:
        assert token is not None and notes
        assert {n["progressToken"] for n in notes} == {token}
        assert len(heard) == len(notes)
    else:
        assert token is None and notes == []
