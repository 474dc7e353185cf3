"""Converting MCP results to ToolResult, and cutting big ones with the full text spilled to a file."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import mcp_types

from backend.domain.tools import ToolResult
from backend.mcp.results import DEFAULT_SPILL_LIMIT, SPILL_DIR, cap_result, spill_file_name, to_tool_result


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


def test_a_structured_only_result_reaches_the_model_as_json():
    result = mcp_types.CallToolResult(content=[], structured_content={"temperature": 21.5, "unit": "°C"})
    converted = to_tool_result(result)
    assert converted.text == '{"temperature": 21.5, "unit": "°C"}'
    assert converted.structured == {"temperature": 21.5, "unit": "°C"}


def test_structured_content_of_any_json_value_with_blank_text_is_sent_as_that_value():
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(text="  ")], structured_content=[1, 2])
    assert to_tool_result(result).text == "[1, 2]"
    # Only empty values (a tool that returned ""): the empty text already says it all.
    empty = mcp_types.CallToolResult(content=[mcp_types.TextContent(text="")], structured_content={"result": ""})
    assert to_tool_result(empty).text == ""


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_an_image_models_cannot_read_is_a_note_saying_why_not_data():
    svg = base64.b64encode(b"<svg/>").decode()
    result = mcp_types.CallToolResult(content=[mcp_types.ImageContent(data=svg, mime_type="image/svg+xml")])
    converted = to_tool_result(result)
    assert converted.images == []
    assert "image/svg+xml" in converted.text and "PNG, JPEG, GIF and WebP" in converted.text
    assert svg not in converted.text


def test_an_image_over_the_size_limit_is_left_out_with_a_note_naming_the_limit():
    big = base64.b64encode(b"x" * 2048).decode()
    result = mcp_types.CallToolResult(
        content=[mcp_types.ImageContent(data=big, mime_type="image/png"), mcp_types.ImageContent(data=PNG, mime_type="image/png")]
    )
    converted = to_tool_result(result, max_media_bytes=1024)
    assert converted.images == [{"data": PNG, "mime_type": "image/png"}]
    assert converted.text == "[image (image/png, 2.0 KB) left out: over the 1.0 KB limit for one image]"


def test_an_image_that_is_not_base64_is_a_note():
    result = mcp_types.CallToolResult(content=[mcp_types.ImageContent(data="not base64!", mime_type="image/png")])
    converted = to_tool_result(result)
    assert converted.images == [] and "not valid base64" in converted.text


def test_audio_is_kept_for_the_person_and_the_model_reads_a_note_about_it():
    wav = base64.b64encode(b"RIFF" + b"\0" * 60).decode()
    result = mcp_types.CallToolResult(content=[mcp_types.AudioContent(data=wav, mime_type="audio/wav")])
    converted = to_tool_result(result)
    assert converted.audio == [{"data": wav, "mime_type": "audio/wav"}]
    assert converted.text == "[audio (audio/wav, 64 bytes) returned: the model receives no audio, only this note]"


def test_embedded_resources_are_rendered_with_their_uri_and_type_and_binary_is_named_not_inlined():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.EmbeddedResource(
                resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="inside", mime_type="text/plain")
            ),
            mcp_types.EmbeddedResource(
                resource=mcp_types.BlobResourceContents(uri="file:///b.bin", blob="AAAA", mime_type="x/bin")
            ),
            mcp_types.EmbeddedResource(
                resource=mcp_types.BlobResourceContents(
                    uri="file:///c.json", blob=base64.b64encode(b'{"a": 1}').decode(), mime_type="application/json"
                )
            ),
        ]
    )
    converted = to_tool_result(result)
    assert converted.text.split("\n") == [
        '<resource uri="file:///a.txt" mimeType="text/plain">',
        "inside",
        "</resource>",
        '<resource uri="file:///b.bin" mimeType="x/bin">',
        "[binary content, 3 bytes, not shown]",
        "</resource>",
        '<resource uri="file:///c.json" mimeType="application/json">',
        '{"a": 1}',
        "</resource>",
    ]


def test_an_embedded_image_resource_reaches_the_model_as_an_image():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.EmbeddedResource(
                resource=mcp_types.BlobResourceContents(uri="shot://1", blob=PNG, mime_type="image/png")
            )
        ]
    )
    converted = to_tool_result(result)
    assert converted.images == [{"data": PNG, "mime_type": "image/png"}]
    assert 'uri="shot://1"' in converted.text and PNG not in converted.text


def test_a_resource_link_names_its_uri_name_title_type_size_and_description():
    link = mcp_types.ResourceLink(
        uri="file:///report.pdf",
        name="report",
        title="Q3 <report>",
        mime_type="application/pdf",
        size=2048,
        description="The quarterly report.",
    )
    converted = to_tool_result(mcp_types.CallToolResult(content=[link, mcp_types.ResourceLink(uri="file:///c.txt", name="c")]))
    assert converted.text.splitlines() == [
        '<resource_link uri="file:///report.pdf" name="report" title="Q3 &lt;report&gt;" '
        'mimeType="application/pdf" size="2.0 KB">The quarterly report.</resource_link>',
        '<resource_link uri="file:///c.txt" name="c" />',
    ]


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


def test_a_spill_folder_a_command_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (workspace / ".overseer").mkdir(parents=True)
    elsewhere.mkdir()
    (workspace / ".overseer" / "spill").symlink_to(elsewhere)
    cut = cap_result(ToolResult(text="x" * 5000), workspace=workspace, call_id="c1", limit=100)
    assert cut.spilled_to is None and "could not be saved" in cut.text
    assert list(elsewhere.iterdir()) == []


def test_a_spill_file_is_readable_by_the_host_user_only_and_so_is_its_folder(tmp_path: Path) -> None:
    (tmp_path / SPILL_DIR).mkdir(parents=True, mode=0o755)  # a folder an older version made
    (tmp_path / SPILL_DIR).chmod(0o755)
    cut = cap_result(ToolResult(text="s" * 5000), workspace=tmp_path, call_id="c1", limit=100)
    assert cut.spilled_to is not None
    assert stat.S_IMODE((tmp_path / cut.spilled_to).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / SPILL_DIR).stat().st_mode) == 0o700


def test_a_new_spill_folder_is_made_private(tmp_path: Path) -> None:
    cap_result(ToolResult(text="s" * 5000), workspace=tmp_path, call_id="c1", limit=100)
    assert stat.S_IMODE((tmp_path / SPILL_DIR).stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / SPILL_DIR.parent).stat().st_mode) == 0o700


def test_an_image_with_structured_content_that_repeats_it_reaches_the_model_as_the_image_alone():
    # server-filesystem's read_media_file: the block, and structuredContent holding the same block.
    block = {"type": "image", "data": PNG, "mimeType": "image/png"}
    result = mcp_types.CallToolResult(content=[mcp_types.ImageContent(data=PNG, mime_type="image/png")], structured_content={"content": [block]})
    converted = to_tool_result(result)
    assert converted.images == [{"data": PNG, "mime_type": "image/png"}]
    assert converted.text == ""
    assert converted.structured is None  # kept as a file already; never copied into events


def test_media_wins_over_the_structured_fallback_even_when_left_out_and_text_still_goes_along():
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text="caption"), mcp_types.ImageContent(data="bad!", mime_type="image/png")],
        structured_content={"content": [{"type": "image", "data": "bad!"}]},
    )
    assert to_tool_result(result).text == "caption\n[image (image/png) left out: its data is not valid base64]"
    audio_only = mcp_types.CallToolResult(
        content=[mcp_types.AudioContent(data="UklGRg==", mime_type="audio/wav")], structured_content={"length_s": 3}
    )
    converted = to_tool_result(audio_only)
    assert converted.text == "[audio (audio/wav, 4 bytes) returned: the model receives no audio, only this note]"
    assert converted.structured == {"length_s": 3}  # says something the media does not: kept for programs


def user(block):
    return block.model_copy(update={"annotations": mcp_types.Annotations(audience=["user"])})


def assistant(block):
    return block.model_copy(update={"annotations": mcp_types.Annotations(audience=["assistant"])})


def test_blocks_for_the_person_alone_are_kept_from_the_model_for_the_tool_card():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(text="for both"),
            user(mcp_types.TextContent(text="for you")),
            user(mcp_types.ImageContent(data=PNG, mime_type="image/png")),
            user(mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents(uri="file:///a.md", text="# A"))),
            mcp_types.TextContent(text="also both").model_copy(
                update={"annotations": mcp_types.Annotations(audience=["user", "assistant"])}
            ),
        ]
    )
    converted = to_tool_result(result)
    assert converted.text == "for both\nalso both"
    assert converted.images == []
    assert converted.user_media == [{"kind": "image", "data": PNG, "mime_type": "image/png"}]
    assert converted.user_text == 'for you\n<resource uri="file:///a.md">\n# A\n</resource>'
    assert converted.card_text().endswith("[For you alone: the tool kept this from the model]\n" + converted.user_text)


def test_a_result_whose_text_is_all_for_the_person_gives_the_model_its_structured_content():
    result = mcp_types.CallToolResult(content=[user(mcp_types.TextContent(text="Done!"))], structured_content={"ok": True})
    converted = to_tool_result(result)
    assert (converted.text, converted.user_text) == ('{"ok": true}', "Done!")


def test_blocks_for_the_model_alone_reach_it_and_are_marked_on_the_card():
    result = mcp_types.CallToolResult(
        content=[assistant(mcp_types.TextContent(text="internal id 7")), mcp_types.TextContent(text="saved")]
    )
    converted = to_tool_result(result)
    assert converted.text == "internal id 7\nsaved"
    assert converted.model_only == ["internal id 7"]
    assert converted.card_text() == "saved\n\n[For the model alone: the tool did not mean this for you]\ninternal id 7"
    assert ToolResult(text="plain\n").card_text() == "plain\n"  # a result without audiences: as it is


def test_text_for_the_person_alone_is_cut_at_the_limit_the_models_text_has():
    big = "x" * (DEFAULT_SPILL_LIMIT + 10)
    converted = to_tool_result(mcp_types.CallToolResult(content=[user(mcp_types.TextContent(text=big))]))
    assert converted.user_text.startswith("x" * 100) and len(converted.user_text) < DEFAULT_SPILL_LIMIT + 200
    assert converted.user_text.endswith(f"[Cut: showing the first {DEFAULT_SPILL_LIMIT:,} of {len(big):,} bytes the tool meant for you.]")
