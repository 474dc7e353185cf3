"""scripts/conformance_client.py: what the conformance runner sends in the model's and the person's place."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import mcp_types

from backend.domain.tools import ToolInfo
from backend.mcp.elicitation import CallInFlight, Elicitation

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "conformance_client.py"
_spec = importlib.util.spec_from_file_location("conformance_client", _PATH)
assert _spec is not None and _spec.loader is not None
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)


def tool(name: str, schema: dict) -> ToolInfo:
    return ToolInfo(name=f"mcp__conformance__{name}", server="conformance", tool=name, input_schema=schema)


def test_made_up_arguments_fill_each_required_field_with_its_default_first_choice_or_a_value_of_its_type():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "string", "default": "given"},
            "c": {"type": "string", "enum": ["first", "second"]},
            "d": {"type": "boolean"},
            "optional": {"type": "string"},
        },
        "required": ["a", "b", "c", "d"],
    }
    assert runner.arguments_for(schema) == {"a": 1, "b": "given", "c": "first", "d": True}


def test_a_scenario_that_names_its_calls_gets_exactly_those_arguments_null_included():
    headers = tool("test_custom_headers", {"type": "object", "properties": {"region": {"type": "string"}}})
    context = {"toolCalls": [{"name": "test_custom_headers", "arguments": {"region": "us-east1", "verbose": None}}]}
    assert runner.arguments_in("http-custom-headers", headers, [headers], context) == {
        "region": "us-east1",
        "verbose": None,
    }


def test_the_schema_echo_sends_the_other_tools_input_schema_as_the_catalog_holds_it():
    rich = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "$defs": {"x": {}}}
    focal = tool("json_schema_2020_12_tool", rich)
    echo = tool("echo", {"type": "object", "properties": {"schema": {"type": "object"}}, "required": ["schema"]})
    arguments = runner.arguments_in("json-schema-2020-12-preservation", echo, [focal, echo], {})
    assert arguments == {"schema": rich}


async def test_the_person_submits_a_form_as_the_server_filled_it_in():
    question = Elicitation(
        call=CallInFlight(server="conformance", tool="t", session_id="s"),
        message="defaults?",
        requested_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "default": "Ada"}, "age": {"type": "integer", "default": 36}},
        },
    )
    answer = await runner.as_filled_in(question)
    assert answer == mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": 36})
