"""Tool-call arguments: JSON, repaired near-JSON, or a clear error."""

from __future__ import annotations

import pytest

from backend.engine.models.arguments import parse_arguments


def test_valid_json_object_is_parsed_as_is():
    assert parse_arguments('{"path": "a.txt"}', tool="t") == ({"path": "a.txt"}, None)


@pytest.mark.parametrize(
    "raw",
    ['{"path": "a.txt"', "{'path': 'a.txt'}", '{"path": "a.txt",}', '```json\n{"path": "a.txt"}\n```'],
)
def test_near_json_is_repaired(raw):
    arguments, error = parse_arguments(raw, tool="t")
    assert error is None
    assert arguments == {"path": "a.txt"}


def test_empty_arguments_mean_no_arguments():
    assert parse_arguments("", tool="t") == ({}, None)


@pytest.mark.parametrize("raw", ["not json at all", "[1, 2]", "42"])
def test_unrepairable_arguments_give_an_error_naming_the_tool(raw):
    arguments, error = parse_arguments(raw, tool="mcp__file__read_file")
    assert arguments == {}
    assert error is not None and "mcp__file__read_file" in error and "JSON object" in error
