"""Converting MCP results to ToolResult, and cutting big ones with the full text spilled to a file."""

from __future__ import annotations

from pathlib import Path

import mcp_types

from backend.domain.tools import ToolResult
from backend.mcp.results import SPILL_DIR, cap_result, spill_file_name, to_tool_result


def test_text_blocks_are_joined_and_images_collected():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(text="first"),
            mcp_types.ImageContent(data="aGk=", mime_type="image/png"),
            mcp_types.TextContent(text="second"),
        ],
        structured_content={"answer": 42},
    )
    converted = to_tool_result(result)
    assert converted.text == "first\nsecond"
    assert converted.images == [{"data": "aGk=", "mime_type": "image/png"}]
    assert converted.structured == {"answer": 42}
    assert not converted.is_error


def test_error_flag_is_kept():
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(text="no")], is_error=True)
    assert to_tool_result(result).is_error


def test_structured_content_that_is_not_an_object_is_wrapped():
    result = mcp_types.CallToolResult(content=[], structured_content=[1, 2])
    assert to_tool_result(result).structured == {"result": [1, 2]}


def test_resources_become_text_and_binary_is_named_not_inlined():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.EmbeddedResource(
                resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="inside")
            ),
            mcp_types.EmbeddedResource(
                resource=mcp_types.BlobResourceContents(uri="file:///b.bin", blob="AAAA", mime_type="x/bin")
            ),
            mcp_types.ResourceLink(uri="file:///c.txt", name="c"),
        ]
    )
    lines = to_tool_result(result).text.splitlines()
    assert lines[0] == "inside"
    assert "file:///b.bin" in lines[1] and "AAAA" not in lines[1]
    assert "file:///c.txt" in lines[2]


def test_result_under_the_limit_is_unchanged(tmp_path: Path):
    result = ToolResult(text="x" * 100)
    assert cap_result(result, workspace=tmp_path, call_id="c1", limit=100) is result
    assert not (tmp_path / SPILL_DIR).exists()


def test_result_over_the_limit_is_cut_and_spilled(tmp_path: Path):
    text = "".join(f"line {n}\n" for n in range(1000))
    result = ToolResult(text=text, structured={"result": text})
    cut = cap_result(result, workspace=tmp_path, call_id="call_7", limit=200)
    assert cut.spilled_to == f"{SPILL_DIR.as_posix()}/call_7.txt"
    assert cut.text.startswith(text[:200])
    assert cut.spilled_to in cut.text.splitlines()[-1]
    assert (tmp_path / cut.spilled_to).read_text() == text
    # The structured copy of the text would defeat the cut.
    assert cut.structured is None
    assert not cut.is_error


def test_cut_never_splits_a_multibyte_character(tmp_path: Path):
    text = "é" * 100  # two bytes each
    cut = cap_result(ToolResult(text=text), workspace=tmp_path, call_id="c", limit=51)
    head = cut.text.split("\n\n[")[0]
    assert head == "é" * 25


def test_call_ids_cannot_escape_the_spill_folder(tmp_path: Path):
    assert spill_file_name("../../etc/passwd") == ".._.._etc_passwd.txt"
    cut = cap_result(ToolResult(text="y" * 50), workspace=tmp_path, call_id="../x", limit=10)
    assert cut.spilled_to is not None
    assert (tmp_path / cut.spilled_to).parent == tmp_path / SPILL_DIR


def test_unwritable_workspace_still_cuts(tmp_path: Path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    cut = cap_result(ToolResult(text="z" * 500), workspace=blocker, call_id="c", limit=100)
    assert cut.spilled_to is None
    assert len(cut.text) < 500
