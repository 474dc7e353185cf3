"""Server stdout split into messages in linear time, with a cap per line (issue 13, item 8)."""

from __future__ import annotations

import json

from backend.mcp.lines import LineSplitter, Oversized
from backend.mcp.transport import _message_of


def test_lines_are_whole_however_the_chunks_fall():
    splitter = LineSplitter()
    assert splitter.feed('{"a":') == []
    assert splitter.feed('1}\n{"b"') == ['{"a":1}']
    assert splitter.feed(":2}\n\n{}\n") == ['{"b":2}', "", "{}"]
    assert splitter.feed("") == []


def test_a_line_over_the_cap_is_skipped_and_reported_by_its_head_and_size():
    splitter = LineSplitter(limit=100)
    head = '{"jsonrpc":"2.0","id":7,"result":{"content":"'
    out = splitter.feed(head + "x" * 60)
    out += splitter.feed("x" * 500)
    out += splitter.feed('"}}\n{"jsonrpc":"2.0","id":8,"result":{}}\n')
    [big, after] = out
    assert isinstance(big, Oversized)
    assert big.length == len(head) + 560 + 3
    assert big.request_id() == 7
    assert after == '{"jsonrpc":"2.0","id":8,"result":{}}'


def test_an_oversized_answer_becomes_an_error_for_its_request_not_a_hang():
    message = _message_of(Oversized(head='{"jsonrpc":"2.0","id":"req-3","result"', length=5_000_000), 1_000_000)
    assert message is not None and not isinstance(message, Exception)
    sent = json.loads(message.message.model_dump_json(by_alias=True, exclude_unset=True))
    assert sent["id"] == "req-3"
    assert "5,000,000 characters" in sent["error"]["message"]


def test_an_oversized_line_without_an_id_is_dropped_and_blank_lines_are_nothing():
    assert _message_of(Oversized(head='{"jsonrpc":"2.0","method":"notify"', length=10), 5) is None
    assert _message_of("   ", 5) is None
