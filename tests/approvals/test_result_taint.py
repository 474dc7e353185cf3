"""Text of an earlier tool result found in a later call's arguments (backend/approvals/result_taint.py)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from backend.approvals.result_taint import (
    PIECES_PER_SESSION,
    ResultTaint,
    carried_review,
    escalates,
    secret_pieces,
)
from backend.domain.tools import ToolAnnotations
from backend.rules.policy_engine import Evaluation, ToolCallView

KEY = "sk-live-9fQ2xLr7TzWb81KmPq4V"
ENV = f"DATABASE_HOST=db.internal\nSTRIPE_API_KEY={KEY}\nDB_PASSWORD=hunter2hunter\nDEBUG=true\n"
READ = "mcp__vault__read_secret"
TRUSTED = ("file", "shell")


def remembered(text: str = ENV, *, tool: str = READ) -> ResultTaint:
    taint = ResultTaint()
    taint.remember("s1", tool_name="mcp__vault__list", tool_call_id="c0", text="nothing here")
    taint.remember("s1", tool_name=tool, tool_call_id="c1", text=text)
    return taint


def send(body: str, *, read_only: bool = False) -> ToolCallView:
    return ToolCallView(
        name="mcp__mail__send",
        arguments={"to": "x@example.com", "body": body},
        workspace=Path("/w"),
        annotations=ToolAnnotations(readOnlyHint=read_only),
    )


def test_a_key_and_a_secret_named_value_are_remembered_but_not_plain_settings():
    pieces = secret_pieces(ENV)
    assert pieces[KEY] is True and pieces["hunter2hunter"] is True
    assert not any("db.internal" == p or "true" == p for p in pieces)


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog, again and again and again.",
        "see /usr/lib/python3.11/site-packages/requests/__init__.py",
        "https://api.example.com/v1/users?page=2",
        "PASSWORD=changeme and TOKEN=${API_TOKEN} and SECRET=<your-secret-here>",
        "internationalization characteristically",
    ],
)
def test_common_words_paths_urls_and_placeholders_are_not_remembered(text):
    assert secret_pieces(text) == {}


def test_the_secret_in_a_later_argument_is_found_with_the_result_it_came_from():
    [found] = remembered().find("s1", {"to": "x@example.com", "body": f"here: {KEY}"})
    assert (found.argument, found.tool_name, found.step, found.tool_call_id) == ("body", READ, 2, "c1")
    assert found.encoding == "plain" and found.looks_secret
    assert found.text == f"This argument contains text from the result of {READ} (step 2)"


@pytest.mark.parametrize(
    ("encode", "encoding"),
    [
        (lambda raw: base64.b64encode(raw).decode(), "base64"),
        (lambda raw: "data=" + base64.urlsafe_b64encode(raw).decode().rstrip("="), "base64"),
        (lambda raw: raw.hex(), "hex"),
    ],
)
def test_the_secret_is_found_base64_base64url_and_hex_encoded(encode, encoding):
    [found] = remembered().find("s1", {"payload": {"items": [encode(f"creds {KEY} end".encode())]}})
    assert (found.argument, found.encoding) == ("payload.items[0]", encoding)
    assert found.text.endswith(f"(step 2, {encoding}-encoded)")


def test_a_whole_env_file_sent_base64_is_found():
    [found] = remembered().find("s1", {"body": base64.b64encode(ENV.encode()).decode()})
    assert found.encoding == "base64"


@pytest.mark.parametrize(
    "body",
    ["hello, the build is green", "sk-live", "password hunter2", base64.b64encode(b"just some words").decode()],
)
def test_arguments_without_the_text_are_not_flagged(body):
    assert remembered().find("s1", {"body": body}) == []


def test_sessions_are_kept_apart():
    assert remembered().find("another", {"body": KEY}) == []


def test_memory_is_bounded_and_the_oldest_pieces_go_first():
    taint = remembered()
    for i in range(PIECES_PER_SESSION):
        taint.remember("s1", tool_name="mcp__x__t", tool_call_id=f"n{i}", text=f"token=Zq{i:05d}Xv8Lm3Rt7Wp2Ks")
    assert taint.find("s1", {"body": KEY}) == []
    assert taint.find("s1", {"body": f"Zq{PIECES_PER_SESSION - 1:05d}Xv8Lm3Rt7Wp2Ks"}) != []


def test_an_id_read_earlier_is_flagged_but_does_not_make_an_allowed_call_ask():
    commit = "3f2b8c1e9a7d4b6c8e0f1a2b3c4d5e6f7a8b9c0d"
    taint = remembered(f"commit {commit}")
    view = send(f"see {commit}")
    [found] = taint.find("s1", view.arguments)
    assert not found.looks_secret
    allowed = Evaluation(verdict="allow", reason="allow rule mcp__mail (user)", rule="mcp__mail")
    assert carried_review(view, allowed, [found], TRUSTED) is allowed


def test_an_allowed_third_party_call_carrying_a_secret_asks_and_says_why():
    view = send(KEY)
    carried = remembered().find("s1", view.arguments)
    allowed = Evaluation(verdict="allow", reason="allow rule mcp__mail (user)", rule="mcp__mail", source="user")
    asked = carried_review(view, allowed, carried, TRUSTED)
    assert asked.verdict == "ask" and asked.source == "result_taint"
    assert asked.reason.startswith(f"This argument contains text from the result of {READ} (step 2), in `body`")


def test_a_read_only_tool_a_trusted_server_and_a_hooks_allow_keep_their_allow():
    carried = remembered().find("s1", {"body": KEY})
    assert not escalates(carried, send(KEY, read_only=True), TRUSTED)
    assert not escalates(carried, send(KEY), ("mail",))
    hook = Evaluation(verdict="allow", reason="allowed by hook", source="hook")
    assert carried_review(send(KEY), hook, carried, TRUSTED) is hook
