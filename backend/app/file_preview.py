"""The file a pending write or edit would change, as it is on disk now: what a person reviews
before allowing (issue 16: "diff against the file on disk").

Only for the built-in file server's `write_file` and `edit_file`, only while the approval waits,
and only inside the session's workspace (the file server refuses anything outside it too), so
this shows nothing a person could not already read from the workspace they are answering for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.domain.errors import BadRequest, Conflict
from backend.store.base import Store

PREVIEWED_TOOLS = frozenset({"mcp__file__write_file", "mcp__file__edit_file"})
MAX_PREVIEW_BYTES = 512 * 1024
"""Larger files are not sent: the card says so and shows the arguments alone."""


@dataclass(kw_only=True)
class FileOnDisk:
    """The target of a pending write or edit. `content` is None when there is nothing to show:
    the file does not exist, is binary, or is too large (`note` says which)."""

    path: str
    exists: bool
    content: str | None = None
    note: str | None = None


async def file_on_disk(store: Store, approval_id: str) -> FileOnDisk:
    approval = await store.get_approval(approval_id)
    if approval.tool_name not in PREVIEWED_TOOLS:
        raise BadRequest(f"{approval.tool_name} does not write a file")
    if approval.status != "pending":
        raise Conflict("the request was already answered: the file on disk may already be changed")
    path = approval.arguments.get("path")
    if not isinstance(path, str) or not path:
        raise BadRequest("the call names no path")
    session = await store.get_session(approval.session_id)
    root = Path(session.workspace).expanduser().resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise BadRequest("the path is outside the session's workspace")
    if not target.exists():
        return FileOnDisk(path=path, exists=False)
    if not target.is_file():
        return FileOnDisk(path=path, exists=True, note="not a regular file")
    if target.stat().st_size > MAX_PREVIEW_BYTES:
        return FileOnDisk(path=path, exists=True, note=f"larger than {MAX_PREVIEW_BYTES // 1024} KB")
    data = target.read_bytes()
    try:
        return FileOnDisk(path=path, exists=True, content=data.decode("utf-8"))
    except UnicodeDecodeError:
        return FileOnDisk(path=path, exists=True, note="binary")
