"""The built-in layer above every rule: Overseer's own folders are never open to the file tools.

The data dir (the database: sessions, audit, hashed keys, OAuth tokens) and the checkpoints dir
(every byte of every workspace) may lie inside a workspace: a home folder as the workspace, or
`checkpoints.dir` inside another agent's. Commands never see them (the sandbox hides both); a
file tool would, so a file-tool call whose path reaches one is denied before any rule is read,
whatever allows it (`Read(./**)`, a session allow, auto-approve). The file server refuses the
same paths on its own and leaves the folders out of its listings and searches
(mcp_servers/file/server.py): this layer is the audit trail and the reason a person sees, that
one the guarantee should a rule go wrong. Both judge a path with shared/own_data.py.

A path is read as the file server reads it: `~` expanded, joined to the workspace, symlinks and
`..` resolved. Only the file server's tools are judged: commands have the sandbox, and the
memory tools take no paths.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.rules.call_paths import path_arguments
from backend.rules.grammar import FILE_READ_TOOLS, FILE_TOOLS
from shared.home import TildeError, expand_home
from shared.own_data import OwnFolder, own_folder_of, refusal

SOURCE = "own_data"
"""The `source` of this layer's denials."""


@dataclass(frozen=True, kw_only=True)
class OwnDataGuard:
    """Overseer's own folders, and the read roots (skill folders) the reading tools may still use."""

    folders: tuple[OwnFolder, ...]
    read_roots: tuple[Path, ...] = ()

    @classmethod
    def of(cls, *, data_dir: Path, checkpoints_dir: Path, read_roots: Sequence[Path] = ()) -> OwnDataGuard:
        folders = (
            OwnFolder("data dir", data_dir.expanduser()),
            OwnFolder("checkpoints dir", checkpoints_dir.expanduser()),
        )
        return cls(folders=folders, read_roots=tuple(read_roots))

    def refusal(self, name: str, arguments: dict[str, Any], workspace: Path) -> str | None:
        """Why a call of the file tool `name` may not run (a path of it reaches an own folder), or None."""
        if name not in FILE_TOOLS:
            return None
        paths = path_arguments(arguments) or ["."]  # the search tools' default: the workspace
        reading = name in FILE_READ_TOOLS
        for path in paths:
            folder = self._holder(path, workspace, reading=reading)
            if folder is not None:
                return refusal(path, folder)
        return None

    def hides(self, path: str, workspace: Path) -> bool:
        """Whether a path a listing or search shows lies in an own folder (so the line is dropped)."""
        return self._holder(path, workspace, reading=True) is not None

    def _holder(self, path: str, workspace: Path, *, reading: bool) -> OwnFolder | None:
        try:
            expanded = expand_home(path or ".")
        except TildeError:
            return None  # the file server refuses `~user` itself
        if "\x00" in expanded:
            return None  # refused by the file server before it opens anything
        resolved = Path(os.path.realpath(os.path.join(workspace, expanded)))
        usable = (workspace, *self.read_roots) if reading else (workspace,)
        return own_folder_of(self.folders, resolved, usable)
