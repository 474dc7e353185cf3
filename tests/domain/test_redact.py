"""Credentials never reach a log line, a stored error or an event (issue 13, item 15)."""

from __future__ import annotations

import pytest

from backend.domain.redact import REDACTED, redact


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ('127.0.0.1:5 - "WebSocket /ws?token=Zx9_abc-DEF" [accepted]', "Zx9_abc-DEF"),
        ("GET /api/x?since=1&token=Zx9abc&y=2", "Zx9abc"),
        ("Incorrect API key provided: sk-proj-AbCdEf123456789xyz.", "sk-proj-AbCdEf123456789xyz"),
        ("anthropic: invalid x-api-key: sk-ant-api03-abcdefghijklmnop", "sk-ant-api03-abcdefghijklmnop"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9.payload.sig"),
        ('{"api_key": "0123456789abcdef"}', "0123456789abcdef"),
        ("key ovr_AbCdEfGhIjKlMnOp rejected", "ovr_AbCdEfGhIjKlMnOp"),
    ],
)
def test_anything_shaped_like_a_credential_is_replaced(text, gone):
    cleaned = redact(text)
    assert gone not in cleaned
    assert REDACTED in cleaned


def test_a_known_secret_is_replaced_wherever_it_appears():
    assert redact("provider said: bad key hunter2-long (hunter2-long)", ["hunter2-long"]) == (
        f"provider said: bad key {REDACTED} ({REDACTED})"
    )


def test_ordinary_text_and_short_known_values_are_left_alone():
    text = "Tool mcp__file__read_file failed: no such file notes.txt (see token budget)"
    assert redact(text, ["", None, "abc"]) == text
