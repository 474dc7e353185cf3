"""Which of many tools the model is shown in a turn, and `search_tools` to find the others.

A host with hundreds of tools would send every schema on every turn: many tokens, and a model
that chooses worse among many. Past `tool_selection.max_tools` the model is shown the mode's core
tools, the tools most relevant to the conversation (BM25 over names, titles and descriptions, or with
`tool_selection.method: hybrid` a small embedding model too: backend.engine.turns.tool_embeddings),
the session's most-used tools, the tools it found before, and `search_tools`. Selection changes
what is offered, never what is allowed: the gate still refuses a tool the model was not shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Protocol

from backend.config import ToolSelectionConfig
from backend.domain.models import Message, ToolCallRecord
from backend.domain.tools import ToolInfo, ToolResult
from backend.engine.turns.bm25 import Bm25Index

SEARCH_TOOLS = "search_tools"

class ToolIndex(Protocol):
    """Ranks tools for a text: `Bm25Index`, or `tool_embeddings.HybridIndex` when configured."""

    def rank(self, query: str, *, limit: int, exclude: Collection[str] = ()) -> list[ToolInfo]: ...


def search_tools_info(hidden: int) -> ToolInfo:
    """The `search_tools` tool as the model sees it; `hidden`: how many tools it can find."""
    return ToolInfo(
        name=SEARCH_TOOLS,
        server="overseer",
        tool=SEARCH_TOOLS,
        description=(
            f"Find tools by what they do. {hidden} more tools exist than you are shown now "
            "(issue trackers, databases, cloud, messaging, ...). The tools found are listed and "
            "can be called from your next step on, for the rest of this session."
        ),
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words saying what the tool should do."}},
            "required": ["query"],
        },
    )


def conversation_query(history: Iterable[Message], *, last: int = 3) -> str:
    """What the conversation is about, for ranking: the person's last few messages."""
    said = [m.content for m in history if m.role == "user" and m.content]
    return "\n".join(said[-last:])


def most_used(records: Iterable[ToolCallRecord], *, limit: int) -> list[str]:
    """Names of the tools that ran most often (ties by name), from the session's tool-call records."""
    counts = Counter(r.name for r in records if r.status == "done" and r.name != SEARCH_TOOLS)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [name for name, _ in ranked[:limit]]


@dataclass(kw_only=True)
class ToolSelection:
    """One run's selection: the tools the mode offers, their index, and what `search_tools` added."""

    config: ToolSelectionConfig
    pool: list[ToolInfo]
    """Every tool the mode offers, in catalog order (kept: a stable order helps prompt caching)."""
    found: list[str]
    """Tools `search_tools` added this session (the session row keeps them across restarts)."""
    remember: Callable[[list[str]], Awaitable[object]]
    """Persists newly found names on the session."""
    index: ToolIndex = field(init=False)

    def __post_init__(self) -> None:
        if self.config.method == "hybrid":
            # Imported here: most hosts never load the embedding model's module.
            from backend.engine.turns.tool_embeddings import hybrid_index  # noqa: PLC0415

            self.index = hybrid_index(self.pool)
        else:
            self.index = Bm25Index(tools=self.pool)
        self._names = {t.name for t in self.pool}
        self._core = {t.name for t in self.pool if any(fnmatchcase(t.name, p) for p in self.config.core_tools)}

    def offer(self, history: Iterable[Message], records: Iterable[ToolCallRecord]) -> list[ToolInfo]:
        """The tools shown in this turn: core, found, most used and most relevant, then `search_tools`."""
        fixed = self._core | {n for n in self.found if n in self._names}
        fixed |= {n for n in most_used(records, limit=self.config.most_used) if n in self._names}
        relevant = self.index.rank(conversation_query(history), limit=self.config.relevant, exclude=fixed)
        shown = fixed | {t.name for t in relevant}
        tools = [t for t in self.pool if t.name in shown]
        return [*tools, search_tools_info(len(self.pool) - len(tools))]

    def not_shown(self, name: str, shown: Collection[str]) -> str | None:
        """Why a call to `name` is refused when the mode offers it but this step did not show it
        (issue 35, item 13: it is not "a tool the mode does not offer"), with the way to reach it:
        `search_tools`. None for a shown tool, or one the mode does not offer (the gate says that)."""
        if name not in self._names or name in shown:
            return None
        words = " ".join(name.split("__")[-1].split("_"))
        return (
            f"The tool {name!r} exists, but it is not among the {len(shown)} of {len(self.pool)} tools "
            f"shown in this step, so it was not called. Call {SEARCH_TOOLS} with words saying what it "
            f'does (for example {{"query": "{words}"}}): a tool it finds can be called from your next step on.'
        )

    async def search(self, arguments: dict[str, Any]) -> ToolResult:
        """Run one `search_tools` call: find tools for its query and add them for the session."""
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("search_tools needs a `query`: words saying what the tool should do.")
        matches = self.index.rank(query, limit=self.config.search_results)
        if not matches:
            return ToolResult(text=f"No tool matches {query!r}. Try other words.")
        new = [t.name for t in matches if t.name not in self.found]
        if new:
            self.found.extend(new)
            await self.remember(new)
        lines = [f"- {t.name}: {' '.join(t.description.split())[:200]}" for t in matches]
        return ToolResult(text="Found these tools; you can call them from your next step on:\n" + "\n".join(lines))


def select_tools(
    pool: list[ToolInfo],
    config: ToolSelectionConfig,
    *,
    found: Iterable[str],
    remember: Callable[[list[str]], Awaitable[object]],
) -> ToolSelection | None:
    """A selection for a run whose mode offers more than `max_tools` tools; None shows them all."""
    if len(pool) <= config.max_tools:
        return None
    return ToolSelection(config=config, pool=pool, found=list(found), remember=remember)
