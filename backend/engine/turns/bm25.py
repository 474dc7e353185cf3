"""BM25 over tools: ranking a catalog's tools for a text, offline, with no model to load.

Tool selection ranks with it (backend/engine/turns/tool_selection.py), and the hybrid ranking
nudges an embedding model's cosine with its score (backend/engine/turns/tool_embeddings.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from backend.domain.tools import TOOL_PREFIX, ToolInfo

_STOP_WORDS = frozenset(
    "a an and are as at be by can do for from how i in into is it me my of on or our please "
    "that the this to us we what when which with you your".split()
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    # A crude suffix stripper: applied alike to tools and queries, so "issues" meets "issue" and
    # "creating" meets "create", which is most of what a full stemmer would win here.
    w = word
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]  # running -> runn -> run
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """Lowercase stemmed words of `text`; `create_issue`, `createIssue` and "create issues" agree."""
    words = _WORD.findall(_CAMEL.sub(r"\1 \2", text).lower())
    return [_stem(w) for w in words if w not in _STOP_WORDS]


def _document(tool: ToolInfo) -> list[str]:
    # The name and title say what a tool is in a few words: counted twice against a long description.
    name = tool.name[len(TOOL_PREFIX) :] if tool.name.startswith(TOOL_PREFIX) else tool.name
    short = tokenize(name.replace("__", " ")) + tokenize(tool.annotations.title or "")
    return short + short + tokenize(tool.description)


@dataclass(kw_only=True)
class Bm25Index:
    """Okapi BM25 over the tools' names, titles and descriptions (offline, no model to load)."""

    tools: list[ToolInfo]
    k1: float = 1.5
    b: float = 0.75
    _postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _lengths: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for i, tool in enumerate(self.tools):
            terms = Counter(_document(tool))
            self._lengths.append(sum(terms.values()))
            for term, count in terms.items():
                self._postings.setdefault(term, []).append((i, count))
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0

    def scores(self, query: str) -> dict[int, float]:
        """Each matching tool's score (by position in `tools`); tools sharing no word are left out."""
        n = len(self.tools)
        scores: dict[int, float] = {}
        for term in set(tokenize(query)):
            postings = self._postings.get(term, [])
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for i, tf in postings:
                norm = tf + self.k1 * (1 - self.b + self.b * self._lengths[i] / self._average)
                scores[i] = scores.get(i, 0.0) + idf * tf * (self.k1 + 1) / norm
        return scores

    def rank(self, query: str, *, limit: int, exclude: Collection[str] = ()) -> list[ToolInfo]:
        """The `limit` best-scoring tools for `query`, best first, none of `exclude`."""
        scored = sorted(self.scores(query).items(), key=lambda item: (-item[1], item[0]))
        found = [self.tools[i] for i, _ in scored if self.tools[i].name not in exclude]
        return found[:limit]
