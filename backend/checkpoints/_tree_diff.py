"""What differs between two trees of a shadow repository: per file, with git's unified diff."""

from __future__ import annotations

import os
from dataclasses import dataclass

from backend.checkpoints._git import Git
from backend.checkpoints.values import ChangeStatus, FileChange

_PATCH_OPTIONS = ("-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv")


@dataclass(frozen=True, kw_only=True)
class EntryChange:
    """One path whose entry differs between an old and a new tree (git's raw diff line)."""

    path: str
    status: str
    """git's letter: A (only in new), D (only in old), M (content or mode), T (type)."""
    old_mode: str
    new_mode: str
    old_id: str
    new_id: str


def changed_entries(git: Git, old: str, new: str, specs: list[str] | None = None) -> list[EntryChange]:
    """The paths that differ from tree `old` to tree `new`, limited to `specs` (files or folders) if given."""
    if specs == []:
        return []
    args = ["diff-tree", "-r", "-z", "--raw", "--no-abbrev", "--no-renames", old, new]
    if specs is not None:
        args += ["--", *(f":(literal){spec}" for spec in specs)]
    fields = git.run(*args).split(b"\0")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_id, new_id, status = meta[1:].decode().split(" ")
        found.append(
            EntryChange(
                path=os.fsdecode(path),
                status=status[:1],
                old_mode=old_mode,
                new_mode=new_mode,
                old_id=old_id,
                new_id=new_id,
            )
        )
    return found


def file_changes(git: Git, old: str, new: str) -> list[FileChange]:
    """Every file that differs from `old` to `new`, with its unified diff, in path order."""
    entries = changed_entries(git, old, new)
    if not entries:
        return []
    sections = _sections(git.run("diff-tree", *_PATCH_OPTIONS, old, new))
    # A type change (file to symlink) is two sections in git's patch: a deletion and a creation.
    expected = sum(2 if entry.status == "T" else 1 for entry in entries)
    changes = []
    for entry in entries:
        if expected == len(sections):
            count = 2 if entry.status == "T" else 1
            patch, sections = b"".join(sections[:count]), sections[count:]
        else:  # unexpected layout: ask for this one file alone
            patch = git.run("diff-tree", *_PATCH_OPTIONS, old, new, "--", f":(literal){entry.path}")
        binary = any(line.startswith(b"Binary files ") for line in patch.split(b"\n"))
        changes.append(
            FileChange(
                path=entry.path,
                status=_status(entry),
                diff="" if binary else patch.decode("utf-8", errors="replace"),
                binary=binary,
            )
        )
    return changes


def _status(entry: EntryChange) -> ChangeStatus:
    if entry.status == "A":
        return "added"
    if entry.status == "D":
        return "deleted"
    if entry.old_id == entry.new_id:
        return "mode"
    return "modified"


def _sections(patch: bytes) -> list[bytes]:
    """git's patch split into one piece per `diff --git` header (content lines never start so:
    they begin with ' ', '+', '-' or '@')."""
    sections: list[list[bytes]] = []
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git ") or not sections:
            sections.append([line])
        else:
            sections[-1].append(line)
    joined = [b"\n".join(lines) + b"\n" for lines in sections]
    if joined and joined[-1].endswith(b"\n\n"):
        joined[-1] = joined[-1][:-1]  # the patch's own final newline, not an extra line
    return [] if patch == b"" else joined
