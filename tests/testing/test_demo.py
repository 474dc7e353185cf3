"""The offline demo, played through the real LiteLLM path against the scripted model server."""

from __future__ import annotations

import json
from collections.abc import Callable

import litellm
import pytest

from backend.testing.demo import LIST_DIR, SHELL_EXEC, WRITE_FILE, demo_script
from backend.testing.model_server import ScriptedModelServer
from backend.testing.script import ModelRequest

litellm.suppress_debug_info = True


def _tool(name: str) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }


ALL_TOOLS = [_tool(LIST_DIR), _tool(WRITE_FILE), _tool(SHELL_EXEC)]
Run = Callable[[str, dict], str]


def _workspace(name: str, arguments: dict) -> str:
    """A stand-in for the MCP servers: what each demo tool would answer."""
    return {LIST_DIR: "README.md\nsrc/\ntests/", WRITE_FILE: "wrote notes.txt", SHELL_EXEC: "3 notes.txt"}[
        name
    ]


async def _play(
    srv: ScriptedModelServer, provider: str, run: Run, *, tools=ALL_TOOLS, messages=None
) -> tuple[list[tuple[str, dict]], str, list[dict]]:
    """Drive the conversation like the engine would, until the model answers without tool calls."""
    base = srv.openai_base if provider == "openai" else srv.url
    messages = messages or [{"role": "user", "content": "Show me what you can do"}]
    calls: list[tuple[str, dict]] = []
    for _ in range(10):
        stream = await litellm.acompletion(
            model=f"{provider}/scripted",
            api_base=base,
            api_key="x",
            messages=messages,
            tools=tools,
            stream=True,
        )
        response = litellm.stream_chunk_builder([c async for c in stream], messages=messages)
        message = response.choices[0].message
        if not message.tool_calls:
            return calls, message.content, messages
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            calls.append((call.function.name, arguments))
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": run(call.function.name, arguments)}
            )
    raise AssertionError("the demo never finished")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_demo_lists_writes_notes_counts_lines_and_quotes_the_shell(provider):
    async with ScriptedModelServer(demo_script("my-project")) as srv:
        calls, summary, _ = await _play(srv, provider, _workspace)

    assert [name for name, _ in calls] == [LIST_DIR, WRITE_FILE, SHELL_EXEC]
    assert calls[0][1] == {"path": "."}
    assert calls[1][1]["path"] == "notes.txt"
    assert calls[1][1]["content"].count("\n") == 3
    assert "my-project" in calls[1][1]["content"] and "3 entries" in calls[1][1]["content"]
    assert calls[2][1] == {"command": "wc -l notes.txt"}
    assert "3 notes.txt" in summary


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_denied_write_is_explained_and_nothing_further_runs(provider):
    def deny_writes(name: str, arguments: dict) -> str:
        return "Denied by the person: not now" if name == WRITE_FILE else _workspace(name, arguments)

    async with ScriptedModelServer(demo_script()) as srv:
        calls, summary, _ = await _play(srv, provider, deny_writes)

    assert [name for name, _ in calls] == [LIST_DIR, WRITE_FILE]
    assert "denied" in summary and "not now" in summary


async def test_a_failed_step_is_reported_as_a_failure():
    def broken_shell(name: str, arguments: dict) -> str:
        return "Error: no such command: wc" if name == SHELL_EXEC else _workspace(name, arguments)

    async with ScriptedModelServer(demo_script()) as srv:
        calls, summary, _ = await _play(srv, "openai", broken_shell)

    assert len(calls) == 3
    assert "failed" in summary and "no such command" in summary


async def test_a_new_prompt_starts_the_demo_over():
    async with ScriptedModelServer(demo_script()) as srv:
        _, _, messages = await _play(srv, "openai", _workspace)
        messages.append({"role": "user", "content": "again please"})
        calls, summary, _ = await _play(srv, "openai", _workspace, messages=messages)

    assert [name for name, _ in calls] == [LIST_DIR, WRITE_FILE, SHELL_EXEC]
    assert "3 notes.txt" in summary


async def test_tools_offered_under_another_server_name_are_found_by_their_tool_part():
    renamed = {
        "mcp__overseer__list_dir": LIST_DIR,
        "mcp__overseer__write_file": WRITE_FILE,
        "mcp__overseer__exec": SHELL_EXEC,
    }

    async with ScriptedModelServer(demo_script()) as srv:
        calls, _, _ = await _play(
            srv,
            "openai",
            lambda name, args: _workspace(renamed[name], args),
            tools=[_tool(n) for n in renamed],
        )

    assert [name for name, _ in calls] == list(renamed)


async def test_a_missing_tool_ends_the_demo_with_an_explanation():
    async with ScriptedModelServer(demo_script()) as srv:
        calls, summary, _ = await _play(srv, "openai", _workspace, tools=[_tool(LIST_DIR)])

    assert [name for name, _ in calls] == [LIST_DIR]
    assert WRITE_FILE in summary


def test_an_error_flagged_anthropic_result_stops_the_demo_and_quotes_it():
    request = ModelRequest.from_body(
        "anthropic",
        {
            "model": "m",
            "tools": [{"name": n, "input_schema": {}} for n in (LIST_DIR, WRITE_FILE, SHELL_EXEC)],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "demo"}]},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": LIST_DIR, "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": "The person said no",
                            "is_error": True,
                        }
                    ],
                },
            ],
        },
    )

    reply = demo_script()(request)

    assert not reply.tool_calls
    assert "listing the workspace" in reply.text and "The person said no" in reply.text
