"""The agent loop against the scripted model server, real MCP servers (the shared pool) and both
paths to a model: the direct httpx path for `openai/*` models and LiteLLM (issue 17). Every test
runs on each, so the two cannot drift apart in retries, fallbacks, streaming, argument repair,
usage or cost."""

from __future__ import annotations

import asyncio

import pytest

from backend.testing import ModelRequest, Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

# The shared file + shell pool (tests/conftest.py) runs on the module's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")

ALLOW_SHELL = {"policies": {"mcp__shell__exec": "always_allow"}}


# Each path to the model, for both wire formats: the direct one ("auto") and LiteLLM's.
PATHS = {
    "openai-direct": ("openai", "auto"),
    "openai-litellm": ("openai", "litellm"),
    "anthropic-direct": ("anthropic", "auto"),
    "anthropic-litellm": ("anthropic", "litellm"),
}


def _openai(server) -> dict:
    return {}


def _anthropic(server) -> dict:
    return {"model": "anthropic/scripted", "api_base": server.anthropic_base}


_ANTHROPIC = _anthropic


def _model_on(provider: str):
    return _openai if provider == "openai" else _anthropic


@pytest.fixture(params=list(PATHS))
def transport(request: pytest.FixtureRequest) -> dict:
    """scripted_host arguments that pick the wire format and the path to the model."""
    provider, path = PATHS[request.param]
    return {"model_transport": path, "for_model": _model_on(provider)}


def backup_of(transport: dict) -> str:
    """A fallback model of the primary's provider (it shares the primary's api_base)."""
    return "anthropic/backup" if transport["for_model"] is _ANTHROPIC else "openai/backup"


def call(name: str, arguments: dict | str, id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments, id=id)


def rendezvous(mine: str, theirs: str) -> str:
    # Finishes only if the other command runs at the same time (bounded: ~10 s).
    return (
        f"touch {mine}; for i in $(seq 200); do [ -f {theirs} ] && echo met-{theirs} && exit 0; "
        "sleep 0.05; done; exit 1"
    )


async def test_tool_calls_made_together_run_concurrently(tmp_path, transport, pool):
    script = [
        Reply(
            tool_calls=[
                call("mcp__shell__exec", {"command": rendezvous("a.flag", "b.flag")}, "c1"),
                call("mcp__shell__exec", {"command": rendezvous("b.flag", "a.flag")}, "c2"),
            ]
        ),
        Reply(text="both met"),
    ]
    async with scripted_host(tmp_path, script, **ALLOW_SHELL, pool=pool, **transport) as h:
        session = await h.run("meet")
        assert session.status == "completed"
        results = h.model.requests[-1].tool_results()
        assert sorted(r.text.split()[0] for r in results) == ["met-a.flag", "met-b.flag"]
        h.model.assert_all_used()


async def test_iteration_limit_ends_the_session_with_a_clear_error(tmp_path, transport, pool):
    def forever(request: ModelRequest) -> Reply:
        return Reply(tool_calls=[call("mcp__file__list_dir", {"path": "."})])

    async with scripted_host(tmp_path, forever, max_iterations=3, pool=pool, **transport) as h:
        session = await h.run("loop forever")
        assert session.status == "error"
        assert "iteration limit" in (session.error or "")
        assert len(h.model.requests) == 3


async def test_near_json_arguments_are_repaired_and_the_tool_runs(tmp_path, transport, pool):
    script = [Reply(tool_calls=[call("mcp__file__list_dir", '{"path": "."')]), Reply(text="listed")]
    async with scripted_host(tmp_path, script, pool=pool, **transport) as h:
        (h.workspace / "hello.txt").write_text("hi")
        session = await h.run("list")
        assert session.status == "completed"
        assert "hello.txt" in h.model.requests[-1].tool_results()[0].text


async def test_unrepairable_arguments_come_back_to_the_model_as_a_clear_error(tmp_path, transport, pool):
    script = [Reply(tool_calls=[call("mcp__file__list_dir", "<<not json>>")]), Reply(text="sorry")]
    async with scripted_host(tmp_path, script, pool=pool, **transport) as h:
        session = await h.run("list")
        assert session.status == "completed"
        text = h.model.requests[-1].tool_results()[0].text
        assert "not a JSON object" in text and "different approach" in text


async def test_a_model_500_is_retried_and_the_session_completes(tmp_path, transport, pool):
    async with scripted_host(tmp_path, [Reply(status=500), Reply(text="recovered")], pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "completed"
        events = await h.host.store.list_events(session.id)
        assert any(e.type == "model.retry" for e in events)
        messages = await h.host.store.list_messages(session.id)
        assert messages[-1].content == "recovered"


async def test_the_fallback_model_answers_when_the_primary_keeps_failing(tmp_path, transport, pool):
    def primary_down(request: ModelRequest) -> Reply:
        return Reply(status=503) if request.model == "scripted" else Reply(text=f"from {request.model}")

    async with scripted_host(tmp_path, primary_down, model_retries=1, fallback_models=[backup_of(transport)], pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "completed"
        assert (await h.host.store.list_messages(session.id))[-1].content == "from backup"
        assert [r.model for r in h.model.requests] == ["scripted", "scripted", "backup"]


async def test_a_model_that_keeps_failing_ends_in_error_with_a_clear_message(tmp_path, transport, pool):
    async with scripted_host(tmp_path, lambda r: Reply(status=500), model_retries=1, pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "error"
        assert "could not answer" in (session.error or "") and "500" in (session.error or "")


@pytest.mark.parametrize("body", ["<html>502 Bad Gateway</html>", "", "data: [DONE]\n\n"])
async def test_a_200_without_an_answer_is_an_error_not_an_empty_completion(tmp_path, transport, pool, body):
    # Issue 13, item 12: these ended `completed` with an empty answer.
    async with scripted_host(tmp_path, lambda r: Reply(raw_body=body), model_retries=1, pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "error"
        assert "no text and no tool call" in (session.error or "")
        assert len(h.model.requests) == 2  # retried once, like a broken connection
        assert [m.role for m in await h.host.store.list_messages(session.id)] == ["user"]


async def test_a_200_without_an_answer_then_a_real_one_recovers(tmp_path, transport, pool):
    async with scripted_host(tmp_path, [Reply(raw_body=""), Reply(text="here")], pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "completed"
        assert (await h.host.store.list_messages(session.id))[-1].content == "here"


async def test_a_model_that_never_answers_ends_the_session_in_error_naming_the_request_limit(tmp_path, transport, pool):
    # Issue 13, item 12: a hung model server showed nothing for 150 s (up to 4 x 600 s).
    limits = {"model_request_timeout": 0.5, "model_stream_silence_timeout": 30, "model_retries": 1}
    hung = Reply(hang_before_headers=True)
    async with scripted_host(tmp_path, lambda r: hung, **limits, pool=pool, **transport) as h:
        session = await h.run("hello", timeout=10)
        assert session.status == "error"
        tripped = "the model did not start answering within 0.5 s (model_request_timeout)"
        assert tripped in (session.error or "")
        assert len(h.model.requests) == 2  # retried once, like any timeout
        events = await h.host.store.list_events(session.id)
        assert [e.data["message"] for e in events if e.type == "error"] == [session.error]
        assert tripped in next(e.data["message"] for e in events if e.type == "model.retry")


async def test_a_stream_gone_silent_ends_the_session_in_error_naming_the_silence_limit(tmp_path, transport, pool):
    limits = {"model_request_timeout": 30, "model_stream_silence_timeout": 0.5, "model_retries": 1}
    stalls = Reply(text="a partial answer", hang_after_chunks=4)  # past any preamble (Anthropic: message_start, ping)
    async with scripted_host(tmp_path, lambda r: stalls, **limits, pool=pool, **transport) as h:
        session = await h.run("hello", timeout=10)
        assert session.status == "error"
        tripped = "the model sent nothing for 0.5 s mid-stream (model_stream_silence_timeout)"
        assert tripped in (session.error or "")
        assert len(h.model.requests) == 2
        events = await h.host.store.list_events(session.id)
        assert [e.data["message"] for e in events if e.type == "error"] == [session.error]
        assert [m.role for m in await h.host.store.list_messages(session.id)] == ["user"]


async def test_a_slow_stream_that_keeps_sending_completes_past_both_limits(tmp_path, transport, pool):
    # Every gap (0.3 s; LiteLLM merges at most two) stays under the silence limit; the whole
    # answer takes longer than either limit, so neither may act as a limit on the whole call.
    limits = {"model_request_timeout": 1.5, "model_stream_silence_timeout": 1.0, "model_retries": 0}
    slow = Reply(text="slow but steady", chunk_interval=0.3)
    async with scripted_host(tmp_path, [slow], **limits, pool=pool, **transport) as h:
        loop = asyncio.get_running_loop()
        started = loop.time()
        session = await h.run("hello", timeout=10)
        assert loop.time() - started > 1.5
        assert session.status == "completed"
        assert (await h.host.store.list_messages(session.id))[-1].content == "slow but steady"


async def test_a_provider_error_that_echoes_the_api_key_is_stored_and_sent_redacted(tmp_path, transport, pool):
    # Issue 13, item 15: the key went verbatim into session.error, its event and the database.
    key = "live-AbCdEf0123456789"
    echo = Reply(status=401, text=f"Incorrect API key provided: {key}")
    async with scripted_host(tmp_path, lambda r: echo, model_retries=0, api_key=key, pool=pool, **transport) as h:
        session = await h.run("hello")
        assert session.status == "error"
        assert key not in (session.error or "") and "[redacted]" in (session.error or "")
        events = await h.host.store.list_events(session.id)
        assert any(e.type == "error" for e in events)
        assert not [e for e in events if key in e.model_dump_json()]


async def test_a_retry_notice_never_carries_an_echoed_api_key(tmp_path, transport, pool):
    key = "live-AbCdEf0123456789"
    echo = Reply(status=503, text=f"Upstream refused key {key}")
    async with scripted_host(tmp_path, lambda r: echo, model_retries=1, api_key=key, pool=pool, **transport) as h:
        session = await h.run("hello")
        events = await h.host.store.list_events(session.id)
        retries = [e for e in events if e.type == "model.retry"]
        assert retries and all("[redacted]" in e.data["message"] for e in retries)
        assert not [e for e in events if key in e.model_dump_json()]


async def test_an_unknown_model_costs_nothing_but_its_tokens_are_counted(tmp_path, transport, pool):
    async with scripted_host(tmp_path, [Reply(text="hi", usage=(100, 20))], pool=pool, **transport) as h:
        session = await h.run("hello")
        assert (session.usage.input_tokens, session.usage.output_tokens) == (100, 20)
        assert session.usage.cost_usd == 0


@pytest.mark.parametrize("path", ["auto", "litellm"])
async def test_a_known_model_is_priced_from_the_cost_map(tmp_path, path, pool):
    reply = [Reply(text="hi", usage=(1000, 100))]
    async with scripted_host(tmp_path, reply, model="openai/gpt-4o", pool=pool, model_transport=path) as h:
        session = await h.run("hello")
        assert session.usage.cost_usd == pytest.approx(1000 * 2.5e-6 + 100 * 1e-5)


async def test_an_error_result_carries_a_hint_to_change_approach(tmp_path, transport, pool):
    script = [Reply(tool_calls=[call("mcp__file__read_file", {"path": "missing.txt"})]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, **transport) as h:
        await h.run("read")
        assert "different approach" in h.model.requests[-1].tool_results()[0].text


async def test_an_unknown_tool_is_an_error_result_listing_the_real_ones(tmp_path, transport, pool):
    script = [Reply(tool_calls=[call("mcp__nope__x", {})]), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, **transport) as h:
        session = await h.run("x")
        assert session.status == "completed"
        text = h.model.requests[-1].tool_results()[0].text
        assert "Unknown tool 'mcp__nope__x'" in text and "mcp__file__read_file" in text


async def test_tokens_stream_as_ephemeral_deltas_and_the_message_is_persisted(tmp_path, transport, pool):
    async with scripted_host(tmp_path, [Reply(text="a fairly long streamed answer")], pool=pool, **transport) as h:
        session = await h.run("hello")
        seen = h.events.drain()
        deltas = [e for e in seen if e.type == "token"]
        assert "".join(e.data["text"] for e in deltas) == "a fairly long streamed answer"
        assert all(e.ephemeral for e in deltas)
        assert not any(e.type == "token" for e in await h.host.store.list_events(session.id))


async def test_the_model_is_offered_every_pooled_tool_by_full_name(tmp_path, transport, pool):
    async with scripted_host(tmp_path, [Reply(text="hi")], pool=pool, **transport) as h:
        await h.run("hello")
        names = set(h.model.requests[0].tool_names)
        assert {"mcp__file__read_file", "mcp__file__write_file", "mcp__shell__exec"} <= names


async def test_a_tool_call_whose_arguments_arrive_in_one_huge_event_is_read_whole(tmp_path, transport, pool):
    # One stream event far over 64 KiB (aiohttp's own line limit): the direct path splits lines itself.
    content = "line of a big file\n" * 12_000
    script = [Reply(tool_calls=[call("mcp__file__write_file", {"path": "big.txt", "content": content})]), Reply(text="ok")]
    allow = {"policies": {"mcp__file__write_file": "always_allow"}}
    async with scripted_host(tmp_path, script, **allow, pool=pool, **transport) as h:
        session = await h.run("write")
        assert session.status == "completed", session.error
        assert (h.workspace / "big.txt").read_text() == content
