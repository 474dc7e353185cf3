"""The scripted model server, driven through the real LiteLLM and Anthropic SDK client paths."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable

import anyio
import httpx
import litellm
import pytest
from anthropic import AsyncAnthropic

from backend.testing.model_server import ScriptedModelServer
from backend.testing.script import ModelRequest, Reply, ScriptedToolCall, signature_of

litellm.suppress_debug_info = True

Provider = str  # "openai" | "anthropic", as LiteLLM's model prefix

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "mcp__file__read_file",
            "description": "Read a file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "mcp__shell__exec",
            "description": "Run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    },
]
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Read notes.txt"}]


@pytest.fixture
async def server():
    async with ScriptedModelServer() as srv:
        yield srv


def _base(srv: ScriptedModelServer, provider: Provider) -> str:
    return srv.openai_base if provider == "openai" else srv.anthropic_base


async def _complete(
    srv: ScriptedModelServer, provider: Provider, *, stream: bool, messages=MESSAGES, **kwargs
):
    """One LiteLLM call; a streamed one is rebuilt with `stream_chunk_builder`."""
    response = await litellm.acompletion(
        model=f"{provider}/scripted",
        api_base=_base(srv, provider),
        api_key="x",
        messages=messages,
        tools=TOOLS,
        stream=stream,
        max_retries=0,
        **({"stream_options": {"include_usage": True}} if stream else {}),
        **kwargs,
    )
    if not stream:
        return response, 1
    chunks = [chunk async for chunk in response]
    return litellm.stream_chunk_builder(chunks, messages=messages), len(chunks)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_tool_call_text_and_usage_reach_litellm(server, provider, stream):
    server.push(
        Reply(
            text="Reading it now.",
            tool_calls=[
                ScriptedToolCall(name="mcp__file__read_file", arguments={"path": "notes.txt"}, id="call_1")
            ],
            usage=(123, 45),
        )
    )

    response, chunk_count = await _complete(server, provider, stream=stream)

    message = response.choices[0].message
    assert message.content == "Reading it now."
    assert [c.function.name for c in message.tool_calls] == ["mcp__file__read_file"]
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "notes.txt"}
    assert message.tool_calls[0].id == "call_1"
    assert response.choices[0].finish_reason == "tool_calls"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (123, 45)
    if stream:
        assert chunk_count >= 5  # text and arguments really arrived in pieces
    server.assert_all_used()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_plain_text_reply_ends_the_turn_with_estimated_usage(server, provider, stream):
    server.push(Reply(text="All done: the file has three lines."))

    response, _ = await _complete(server, provider, stream=stream)

    assert response.choices[0].message.content == "All done: the file has three lines."
    assert not response.choices[0].message.tool_calls
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_streamed_parallel_tool_calls_are_rebuilt_in_order(server, provider):
    server.push(
        Reply(
            tool_calls=[
                ScriptedToolCall(name="mcp__file__read_file", arguments={"path": "a.txt"}),
                ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "wc -l a.txt"}),
            ]
        )
    )

    response, _ = await _complete(server, provider, stream=True)

    calls = response.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["mcp__file__read_file", "mcp__shell__exec"]
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"path": "a.txt"},
        {"command": "wc -l a.txt"},
    ]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_string_arguments_reach_the_openai_client_verbatim(server, stream):
    server.push(Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments='{"command": "ls"')]))

    response, _ = await _complete(server, "openai", stream=stream)

    assert response.choices[0].message.tool_calls[0].function.arguments == '{"command": "ls"'


async def test_unparseable_string_arguments_go_under_raw_in_a_whole_anthropic_message(server):
    server.push(Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments="not json")]))

    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{server.url}/v1/messages", json={"model": "m", "max_tokens": 10, "messages": MESSAGES[1:]}
        )

    assert response.json()["content"][0]["input"] == {"__raw__": "not json"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_error_reply_surfaces_as_a_litellm_exception_with_its_status(server, provider, stream):
    server.push(Reply(status=500, text="upstream exploded"))

    with pytest.raises(litellm.exceptions.InternalServerError) as caught:
        await _complete(server, provider, stream=stream)

    assert caught.value.status_code == 500
    server.assert_all_used()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_rate_limit_reply_surfaces_as_a_rate_limit_error(server, provider):
    server.push(Reply(status=429))

    with pytest.raises(litellm.exceptions.RateLimitError) as caught:
        await _complete(server, provider, stream=False)

    assert caught.value.status_code == 429


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_exhausted_script_fails_loudly_naming_the_request(server, provider):
    server.push(Reply(text="only one"))
    await _complete(server, provider, stream=False)

    with pytest.raises(litellm.exceptions.InternalServerError) as caught:
        await _complete(server, provider, stream=False)

    assert caught.value.status_code == 500
    assert "no reply left for request #2" in str(caught.value)
    with pytest.raises(AssertionError, match="request #2"):
        server.assert_all_used()


def test_assert_all_used_names_the_unused_replies():
    with ScriptedModelServer([Reply(text="used"), Reply(text="never sent")]) as srv:
        httpx.post(f"{srv.openai_base}/chat/completions", json={"model": "m", "messages": MESSAGES})

        with pytest.raises(AssertionError, match="never sent"):
            srv.assert_all_used()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_requests_are_recorded_normalised_with_tool_names(server, provider):
    server.push(Reply(text="ok"))

    await _complete(server, provider, stream=True)

    request = server.last_request
    assert request.api == provider
    assert request.tool_names == ["mcp__file__read_file", "mcp__shell__exec"]
    assert request.system == "Be brief."
    assert request.stream is True
    assert request.raw["stream"] is True


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_callable_reply_sees_the_tool_results_of_the_last_turn(server, provider):
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> Reply:
        seen.append(request)
        return Reply(text=f"The file says: {request.last_tool_results()[0]}")

    server.push(reply)
    messages = [
        *MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "mcp__file__read_file", "arguments": '{"path": "notes.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "three little lines"},
    ]

    response, _ = await _complete(server, provider, stream=False, messages=messages)

    assert response.choices[0].message.content == "The file says: three little lines"
    assert seen[0].api == provider
    assert seen[0].last_tool_results() == ["three little lines"]


async def test_a_callable_script_answers_every_request_and_pushed_replies_go_first():
    calls = []

    def echo(request: ModelRequest) -> Reply:
        calls.append(request)
        return Reply(text=f"echo {len(calls)}")

    async with ScriptedModelServer(echo) as srv:
        srv.push(Reply(text="pushed"))
        texts = [
            (await _complete(srv, "openai", stream=False))[0].choices[0].message.content for _ in range(3)
        ]

    assert texts == ["pushed", "echo 1", "echo 2"]


async def test_a_raising_reply_function_answers_500_and_is_reported(server):
    def broken(request: ModelRequest) -> Reply:
        raise ValueError("script bug")

    server.push(broken)

    with pytest.raises(litellm.exceptions.InternalServerError) as caught:
        await _complete(server, "anthropic", stream=False)

    assert caught.value.status_code == 500
    with pytest.raises(AssertionError, match="script bug"):
        server.assert_all_used()


async def test_anthropic_sdk_reads_the_stream_as_a_well_formed_message(server):
    server.push(
        Reply(
            text="Let me check.",
            tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": "wc -l notes.txt"})],
            usage=(50, 7),
        )
    )
    client = AsyncAnthropic(base_url=server.url, api_key="x", max_retries=0)

    async with client.messages.stream(
        model="scripted",
        max_tokens=100,
        messages=[{"role": "user", "content": "count lines"}],
        tools=[{"name": "mcp__shell__exec", "input_schema": {"type": "object"}}],
    ) as stream:
        texts = [text async for text in stream.text_stream]
        message = await stream.get_final_message()
    await client.close()

    assert "".join(texts) == "Let me check."
    assert len(texts) >= 2
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[1].name == "mcp__shell__exec"
    assert message.content[1].input == {"command": "wc -l notes.txt"}
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (50, 7)
    assert server.last_request.tool_names == ["mcp__shell__exec"]


async def test_scripted_reasoning_reaches_the_anthropic_sdk_as_signed_and_redacted_thinking_blocks(server):
    server.push(Reply(thinking="Weighing it up.", redacted_thinking="OPAQUE", text="Yes."))
    client = AsyncAnthropic(base_url=server.url, api_key="x", max_retries=0)

    async with client.messages.stream(
        model="scripted",
        max_tokens=2000,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "should I?"}],
    ) as stream:
        thoughts = [event.thinking async for event in stream if event.type == "thinking"]
        message = await stream.get_final_message()
    await client.close()

    assert "".join(thoughts) == "Weighing it up." and len(thoughts) >= 2
    assert [block.type for block in message.content] == ["thinking", "redacted_thinking", "text"]
    assert message.content[0].signature == signature_of("Weighing it up.")
    assert message.content[1].data == "OPAQUE"
    assert server.last_request.raw["thinking"] == {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_scripted_reasoning_reaches_litellm_as_reasoning_content(server, stream):
    server.push(Reply(thinking="Weighing it up.", text="Yes."))

    response, chunk_count = await _complete(server, "openai", stream=stream)

    message = response.choices[0].message
    assert (message.reasoning_content, message.content) == ("Weighing it up.", "Yes.")


async def test_messages_endpoint_accepts_a_query_string_like_the_claude_cli_sends(server):
    server.push(Reply(text="hi"))

    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{server.url}/v1/messages?beta=true",
            json={"model": "m", "max_tokens": 5, "messages": MESSAGES[1:]},
        )

    assert response.json()["content"] == [{"type": "text", "text": "hi"}]
    assert response.json()["stop_reason"] == "end_turn"


async def test_probes_token_counts_and_model_listing_are_answered_without_using_the_script(server):
    async with httpx.AsyncClient(base_url=server.url) as client:
        head = await client.head("/")
        health = await client.get("/")
        tokens = await client.post("/v1/messages/count_tokens", json={"model": "m", "messages": MESSAGES[1:]})
        models = await client.get("/v1/models")
        missing = await client.post("/v2/nothing", json={})

    assert (head.status_code, health.status_code) == (200, 200)
    assert tokens.json()["input_tokens"] > 0
    assert models.json()["data"][0]["id"] == "scripted"
    assert missing.status_code == 404
    assert server.unknown_paths == ["POST /v2/nothing"]
    assert server.requests == []


async def test_await_requests_returns_once_enough_requests_arrived_and_times_out_otherwise(server):
    server.push(Reply(text="one"))
    await _complete(server, "openai", stream=False)

    await server.await_requests(1, timeout=1)
    with pytest.raises(TimeoutError):
        server.wait_for_requests(2, timeout=0.05)


def test_server_listens_on_a_free_local_port_and_stops_cleanly():
    srv = ScriptedModelServer().start()
    url = srv.url
    assert url.startswith("http://127.0.0.1:")
    assert srv.openai_base == f"{url}/v1" and srv.anthropic_base == url
    assert httpx.get(url).status_code == 200

    srv.stop()
    srv.stop()

    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


# -- scripted stalls: a hung server, a stream gone silent, a slow but live stream ---------------

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def _request(srv: ScriptedModelServer, provider: Provider, *, stream: bool = True) -> tuple[str, dict]:
    body = {"model": "scripted", "max_tokens": 50, "messages": MESSAGES[1:], "stream": stream}
    return f"{srv.url}{PATHS[provider]}", body


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_hanging_reply_sends_no_headers(server, provider, stream):
    server.push(Reply(text="never sent", hang_before_headers=True))
    url, body = _request(server, provider, stream=stream)

    async with httpx.AsyncClient(timeout=httpx.Timeout(5, read=0.3)) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(url, json=body)

    # On a busy machine the client's short read timeout may end before the server has even
    # recorded the request: the request still arrives once, and no header ever did.
    await server.await_requests(1)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_reply_can_stream_some_events_then_go_silent(server, provider):
    server.push(Reply(text="partial answer here", hang_after_chunks=2))
    url, body = _request(server, provider)
    events: list[str] = []

    # A short read timeout on the client also timed out the headers on a slow machine; the
    # headers and the two events get a generous bound, only the silence after them a short one.
    async with httpx.AsyncClient(timeout=httpx.Timeout(10)) as client:
        async with client.stream("POST", url, json=body) as response:
            assert response.status_code == 200
            lines = response.aiter_lines()
            while len(events) < 2:
                line = await asyncio.wait_for(anext(lines), 10)
                if line.startswith("data:"):
                    events.append(line)
            # A third event would be sent at once; an ended stream would stop the iteration.
            with pytest.raises(TimeoutError):
                while True:
                    line = await asyncio.wait_for(anext(lines), 0.5)
                    if line.startswith("data:"):
                        events.append(line)

    assert len(events) == 2


async def test_a_held_reply_finishes_once_released(server):
    release = threading.Event()
    server.push(Reply(thinking="so", text="the whole answer", hang_after_chunks=2, release=release))
    url, body = _request(server, "openai")
    events: list[dict] = []

    async with httpx.AsyncClient(timeout=httpx.Timeout(10)) as client:
        async with client.stream("POST", url, json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:") and line != "data: [DONE]":
                    events.append(json.loads(line[5:]))
                    if len(events) == 2:
                        release.set()  # held after these two: without this, the stream would stay silent

    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices"))
    assert text == "the whole answer"


async def test_a_slow_reply_spaces_its_events_and_still_arrives_whole(server):
    server.push(Reply(text="slow but steady", chunk_interval=0.05))

    loop = asyncio.get_running_loop()
    started = loop.time()
    turn, chunks = await _complete(server, "openai", stream=True)

    assert turn.choices[0].message.content == "slow but steady"
    assert loop.time() - started >= 0.05 * (chunks - 1)


async def test_stopping_the_server_answers_a_request_hung_before_its_headers_at_once():
    async with ScriptedModelServer([Reply(hang_before_headers=True)]) as srv:
        url, body = _request(srv, "openai")
        async with httpx.AsyncClient(timeout=5) as client:
            pending = asyncio.ensure_future(client.post(url, json=body))
            await srv.await_requests(1, timeout=5)

            stopped_in = await _timed(anyio.to_thread.run_sync(srv.stop))
            response = await asyncio.wait_for(pending, 5)

    # Released by the stop itself (a 503), not cut off by uvicorn's 1 s shutdown deadline.
    assert stopped_in < 0.9
    assert response.status_code == 503 and "hung request #1 released" in response.text


async def test_stopping_the_server_ends_a_stream_gone_silent_at_once():
    async with ScriptedModelServer([Reply(text="partial answer", hang_after_chunks=1)]) as srv:
        url, body = _request(srv, "openai")
        async with httpx.AsyncClient(timeout=5) as client, client.stream("POST", url, json=body) as response:
            lines = response.aiter_lines()
            assert (await anext(lines)).startswith("data:")

            stopped_in = await _timed(anyio.to_thread.run_sync(srv.stop))
            rest = [line async for line in lines if line.startswith("data:")]

    assert stopped_in < 0.9
    assert rest == []


async def _timed(step: Awaitable[object]) -> float:
    loop = asyncio.get_running_loop()
    started = loop.time()
    await step
    return loop.time() - started
