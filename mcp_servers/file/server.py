"""The file tool server: read, write, edit, list and search files inside one workspace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from mcp_servers._shared.anchored import Anchored
from mcp_servers._shared.errors import os_errors_as_tool_errors
from mcp_servers._shared.limits import GREP_MAX_MATCHES
from mcp_servers._shared.workspace import (
    confine_readable,
    confine_writable,
    read_root_of,
    workspace_root,
)
from mcp_servers.file.reading import read_page
from mcp_servers.file.searching import find_by_glob, list_entries, search_contents
from mcp_servers.file.writing import edit_text, write_text
from shared.own_data import OwnFolder, own_folder_of, own_identities, refusal

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
# Overwriting with the same content twice leaves the same file: idempotent, but destructive.
OVERWRITES = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)
# A second identical edit fails (old_text is gone), so editing is not idempotent.
EDITS = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)

INSTRUCTIONS = (
    "Files of one workspace. Paths are relative to the workspace root; anything resolving "
    "outside it (via '..', absolute paths or symlinks) is refused."
)
READ_ROOTS_INSTRUCTIONS = (
    " These folders may also be read (read_file, list_dir, glob, grep) by absolute path, "
    "but never written: {roots}. Skills live there: read a skill's SKILL.md by the absolute "
    "path the system prompt gives."
)


def create_server(
    root: Path,
    *,
    trust_meta: bool,
    read_roots: Sequence[Path] = (),
    data_dir: Path | None = None,
    checkpoints_dir: Path | None = None,
) -> MCPServer:
    """Build the file server for the workspace `root`.

    With `trust_meta` (the host launched us) a call's `_meta["overseer/workspace"]`
    replaces `root` for that call. `read_roots` are folders outside any workspace (the
    skill folders) that the reading tools accept absolute paths into; writes never reach them.
    `data_dir` and `checkpoints_dir` are Overseer's own folders: refused to every tool and left
    out of listings and searches, even inside the workspace (shared/own_data.py).
    """
    read_roots = tuple(Path(r).expanduser() for r in read_roots)
    own: list[OwnFolder] = []
    if data_dir is not None:
        own.append(OwnFolder("data dir", Path(data_dir).expanduser()))
    if checkpoints_dir is not None:
        own.append(OwnFolder("checkpoints dir", Path(checkpoints_dir).expanduser()))
    instructions = INSTRUCTIONS
    if read_roots:
        instructions += READ_ROOTS_INSTRUCTIONS.format(roots=", ".join(str(r) for r in read_roots))
    server = MCPServer("file", instructions=instructions)

    def root_for(ctx: Context) -> Path:
        return workspace_root(root, ctx.request_context.meta, trust_meta=trust_meta)

    def refuse_own(resolved: Path, path: str, usable: Sequence[Path]) -> None:
        folder = own_folder_of(own, resolved, usable)
        if folder is not None:
            raise ToolError(refusal(path, folder))

    def left_out() -> frozenset[tuple[int, int]]:
        return own_identities(own) if own else frozenset()

    def readable(workspace: Path, path: str) -> Anchored:
        resolved = confine_readable(workspace, read_roots, path)
        refuse_own(resolved, path, (workspace, *read_roots))
        if resolved.is_relative_to(workspace):
            # Most reads: no read root to resolve (a realpath each, syscalls on every call).
            return Anchored.within(workspace, resolved, path)
        real_roots = [r for r in (read_root_of(read_roots, resolved),) if r is not None]
        return Anchored.within(real_roots, resolved, path)

    def writable(workspace: Path, path: str) -> Anchored:
        resolved = confine_writable(workspace, read_roots, path)
        refuse_own(resolved, path, (workspace,))
        return Anchored.within(workspace, resolved, path)

    @server.tool(title="Read a file", annotations=READ_ONLY)
    def read_file(
        path: str,
        ctx: Context,
        offset: Annotated[int, Field(ge=0, description="first line to read, 0-based")] = 0,
        limit: Annotated[int | None, Field(ge=1, description="how many lines to read")] = None,
    ) -> str:
        """Read a UTF-8 text file, in pages of at most 50 KB.

        When more lines remain, the last line of the result says so and gives the
        offset to continue from. Binary files are refused.
        """
        target = readable(root_for(ctx), path)
        with os_errors_as_tool_errors("read", path):
            return read_page(target, offset=offset, limit=limit)

    @server.tool(title="Write a file", annotations=OVERWRITES)
    def write_file(path: str, content: str, ctx: Context) -> str:
        """Write `content` to a file (created or replaced), creating parent folders as needed."""
        target = writable(root_for(ctx), path)
        with os_errors_as_tool_errors("write", path):
            return write_text(target, content)

    @server.tool(title="Edit a file", annotations=EDITS)
    def edit_file(path: str, old_text: str, new_text: str, ctx: Context) -> str:
        """Replace `old_text` with `new_text` in a file; `old_text` must occur exactly once."""
        target = writable(root_for(ctx), path)
        with os_errors_as_tool_errors("edit", path):
            return edit_text(target, old_text, new_text)

    @server.tool(title="List a folder", annotations=READ_ONLY)
    def list_dir(ctx: Context, path: str = ".") -> str:
        """List a folder's entries, sorted, folders marked with a trailing `/`."""
        target = readable(root_for(ctx), path)
        with os_errors_as_tool_errors("list", path):
            return list_entries(target, left_out())

    @server.tool(title="Find files", annotations=READ_ONLY)
    def glob(pattern: str, ctx: Context, path: str = ".") -> str:
        """Find paths matching a glob (`**` spans folders) under `path`.

        Results are relative to the workspace root (absolute in a read root); folders end with `/`.
        """
        workspace = root_for(ctx)
        target = readable(workspace, path)
        with os_errors_as_tool_errors("search", path):
            return find_by_glob(workspace, target, pattern, left_out())

    @server.tool(title="Search in files", annotations=READ_ONLY)
    def grep(
        pattern: str,
        ctx: Context,
        path: str = ".",
        glob: Annotated[str | None, Field(description="only files matching this glob, e.g. '*.py'")] = None,
    ) -> str:
        """Search text files under `path` for a Python regular expression.

        Results are `file:line:text`, files relative to the workspace root (absolute in a read
        root). Binary files are skipped.
        """
        workspace = root_for(ctx)
        target = readable(workspace, path)
        with os_errors_as_tool_errors("search", path):
            if target.base == workspace:
                return search_contents(workspace, target, pattern, glob, left_out())
            # Searched as its own root, so a symlink in it is never followed out of it.
            found = search_contents(target.base, target, pattern, glob, left_out())
            return _absolute_hits(found, target.base, no_match=f"no matches for {pattern!r} under {path}")

    return server


GREP_OVERFLOW = f"[more than {GREP_MAX_MATCHES} matches; narrow the pattern or the path]"


def _absolute_hits(found: str, read_root: Path, *, no_match: str) -> str:
    """grep hits in a read root, relative to it, made absolute so the model can read them back."""
    if found == no_match:
        return found
    lines = found.split("\n")
    prefix = read_root.as_posix().rstrip("/") + "/"
    return "\n".join(
        line if index == len(lines) - 1 and line == GREP_OVERFLOW else prefix + line
        for index, line in enumerate(lines)
    )
