"""BM25 over tools (backend/engine/turns/bm25.py): names spelled as code meet words said in
prose, and the tool a request needs ranks first among many unrelated ones."""

from __future__ import annotations

import pytest
from sample_tools import MANY, tool

from backend.engine.turns.bm25 import Bm25Index, tokenize


def test_names_spelled_as_code_and_words_said_in_prose_become_the_same_terms():
    assert tokenize("mcp__github__create_issue") == ["mcp", *tokenize("github creating issues")]
    assert tokenize("listPullRequests") == tokenize("list pull requests")


@pytest.mark.parametrize(
    ("request_text", "needed"),
    [
        ("open an issue on GitHub about the crash", "mcp__github__create_issue"),
        ("what will the weather be in Lisbon tomorrow", "mcp__weather__get_forecast"),
        ("refund the customer's last charge", "mcp__stripe__create_refund"),
        ("send a message to the team's slack channel: the deploy is done", "mcp__slack__post_message"),
        ("which tables does the database have", "mcp__postgres__list_tables"),
    ],
)
def test_the_tool_a_request_needs_ranks_first_among_two_hundred_unrelated_ones(request_text, needed):
    ranked = Bm25Index(tools=MANY).rank(request_text, limit=3)
    assert ranked[0].name == needed


def test_a_tool_title_counts_toward_its_relevance():
    titled = tool("x", "t1", "Does a thing.", title="Translate text between languages")
    untitled = tool("x", "t2", "Does another thing.")
    assert [t.name for t in Bm25Index(tools=[untitled, titled]).rank("translate this text", limit=2)] == ["mcp__x__t1"]


def test_ranking_leaves_out_excluded_tools_and_tools_sharing_no_word():
    ranked = Bm25Index(tools=MANY).rank("merge the pull request", limit=10, exclude={"mcp__github__merge_pull_request"})
    assert "mcp__github__merge_pull_request" not in [t.name for t in ranked]
    assert ranked and all(not t.name.startswith("mcp__misc") for t in ranked)
