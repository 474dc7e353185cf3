"""The memory tool server: save, read, search and forget long-term facts of one workspace.

Facts live in `memory/MEMORY.md` and the engine's summaries of old conversation in
`memory/HISTORY.md` (see `memory_files.py`); search goes through an FTS5 index (see `index.py`).
One server is shared by every session of a host, so writes are serialised per workspace here,
and across processes by the lock in `memory_files.py`. File work runs in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from mcp_servers._shared.anchored import Anchored
from mcp_servers._shared.errors import os_errors_as_tool_errors
from mcp_servers._shared.limits import cut_line
from mcp_servers._shared.workspace import workspace_root
from mcp_servers.file.reading import read_page
from mcp_servers.memory import index
from shared import memory_files

MemoryFile = Literal["memory", "history"]

READ_PAGE_LINES = 200
SEARCH_MAX_RESULTS = 50
SEARCH_TEXT_CHARS = 400

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
# Saving a fact that is already there changes nothing, so a repeated save is harmless.
SAVES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
# Forgetting removes a line a person may have written; forgetting it twice removes nothing more.
FORGETS = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

INSTRUCTIONS = (
    "Long-term memory of one workspace. memory/MEMORY.md holds curated facts (one per bullet, "
    "under sections); memory/HISTORY.md is an append-only log of summarised past conversation. "
    "Save durable facts worth knowing in later sessions (preferences, decisions, names), not "
    "passing details. Search before asking the person something they may have said before."
)


def create_server(root: Path, *, trust_meta: bool) -> MCPServer:
    """Build the memory server for the workspace `root`.

    With `trust_meta` (the host launched us) a call's `_meta["overseer/workspace"]`
    replaces `root` for that call.
    """
    server = MCPServer("memory", instructions=INSTRUCTIONS)
    locks: dict[Path, asyncio.Lock] = {}

    def root_for(ctx: Context) -> Path:
        return workspace_root(root, ctx.request_context.meta, trust_meta=trust_meta)

    def lock_for(workspace: Path) -> asyncio.Lock:
        # One lock per workspace covers both files and the index: they change together.
        return locks.setdefault(workspace, asyncio.Lock())

    @server.tool(annotations=SAVES)
    async def memory_save(
        fact: Annotated[str, Field(description="one short, self-contained sentence")],
        ctx: Context,
        section: Annotated[
            str | None,
            Field(
                description=f"heading to file it under, e.g. 'Preferences' (default '{memory_files.DEFAULT_SECTION}')"
            ),
        ] = None,
    ) -> str:
        """Remember a fact in MEMORY.md for later sessions; saving a fact already there does nothing."""
        workspace = root_for(ctx)
        async with lock_for(workspace):
            with os_errors_as_tool_errors("save to", "memory/MEMORY.md"):
                try:
                    (saved,) = await asyncio.to_thread(memory_files.save_facts, workspace, [(fact, section)])
                except ValueError as exc:
                    raise ToolError(str(exc)) from exc
        if not saved.added:
            return f"already remembered as {saved.id} (section '{saved.section}'); nothing saved"
        return f"saved as {saved.id} in memory/MEMORY.md (section '{saved.section}')"

    @server.tool(annotations=READ_ONLY)
    async def memory_read(
        which: Annotated[MemoryFile, Field(description="'memory' for MEMORY.md, 'history' for HISTORY.md")],
        ctx: Context,
        offset: Annotated[int, Field(ge=0, description="first line to read, 0-based")] = 0,
        limit: Annotated[int, Field(ge=1, description="how many lines to read")] = READ_PAGE_LINES,
    ) -> str:
        """Read MEMORY.md or HISTORY.md by lines; when more remain, the last line gives the offset to continue."""
        workspace = root_for(ctx)
        path = memory_files.memory_path(workspace) if which == "memory" else memory_files.history_path(workspace)
        shown = f"{memory_files.MEMORY_DIR}/{path.name}"
        if not path.exists():
            saver = "memory_save" if which == "memory" else "the host's summaries of long sessions"
            return f"({shown} does not exist yet: nothing is remembered; it is written by {saver})"
        with os_errors_as_tool_errors("read", shown):
            return await asyncio.to_thread(read_page, Anchored.within(workspace, path, shown), offset=offset, limit=limit)

    @server.tool(annotations=READ_ONLY)
    async def memory_search(
        query: Annotated[str, Field(description="words to look for; matched as plain words")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=SEARCH_MAX_RESULTS, description="most results")] = 10,
    ) -> str:
        """Search MEMORY.md facts and HISTORY.md entries, best match first (BM25 ranking).

        Each result shows its id (for memory_forget), file, section and text. Edits made to
        the files by hand are found too.
        """
        workspace = root_for(ctx)
        async with lock_for(workspace):
            with os_errors_as_tool_errors("search", "memory/"):
                try:
                    hits = await asyncio.to_thread(index.search, workspace, query, limit)
                except ValueError as exc:
                    raise ToolError(str(exc)) from exc
        if not hits:
            return f"no memory matches {query!r}; try other words, or memory_read to see everything"
        return "\n".join(render_hit(number, hit) for number, hit in enumerate(hits, start=1))

    @server.tool(annotations=FORGETS)
    async def memory_forget(
        id: Annotated[str, Field(description="a fact id from memory_search or MEMORY.md, e.g. 'm3f2a1'")],
        ctx: Context,
    ) -> str:
        """Remove a fact from MEMORY.md by its id. HISTORY.md is an append-only log and is not changed."""
        workspace = root_for(ctx)
        async with lock_for(workspace):
            with os_errors_as_tool_errors("forget in", "memory/MEMORY.md"):
                gone = await asyncio.to_thread(memory_files.forget_fact, workspace, id.strip())
        if not gone:
            raise ToolError(
                f"no fact with id {id!r} in memory/MEMORY.md (already forgotten, or a HISTORY.md entry, "
                "which cannot be forgotten); use memory_search to find the id"
            )
        return f"forgot {id.strip()}: " + "; ".join(cut_line(f.text, SEARCH_TEXT_CHARS) for f in gone)

    return server


def render_hit(number: int, hit: index.Hit) -> str:
    """One result line: rank, id, where it is, and its text (cut when long)."""
    entry = hit.entry
    where = f"{entry.file}, {entry.section}" if entry.section else entry.file
    text = cut_line(" ".join(entry.text.split()), SEARCH_TEXT_CHARS)
    return f"{number}. [{entry.id}] ({where}) {text}"
