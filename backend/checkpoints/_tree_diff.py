"""What differs between two trees of a shadow repository: per file, with git's unified diff.

Two readings of one difference. A restore needs every path on its own (`changed_entries`, no
rename detection: a moved file is its old path deleted and its new path added). A person reads
what a step did (`file_changes`): there git's rename detection pairs a deleted file with an added
one of similar content, so `mv a b` reads "a → b" (with its similarity), not as two changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from backend.checkpoints._git import Git
from backend.checkpoints.values import ChangeStatus, FileChange

_PATCH_OPTIONS = ("-r", "-p", "--no-color", "--no-ext-diff", "--no-textconv")
_NO_RENAMES = "--no-renames"
_RENAMES = "-M"
"""git's rename detection at its default threshold: a file at least 50% alike its old self."""


@dataclass(frozen=True, kw_only=True)
class EntryChange:
    """One path whose entry differs between an old and a new tree (git's raw diff line)."""

    path: str
    status: str
    """git's letter: A (only in new), D (only in old), M (content or mode), T (type), R (renamed:
    only with rename detection)."""
    old_mode: str
    new_mode: str
    old_id: str
    new_id: str
    old_path: str | None = None
    """R: the path in the old tree (`path` is the new one)."""
    score: int | None = None
    """R: git's similarity index, in percent."""


def changed_entries(git: Git, old: str, new: str, specs: list[str] | None = None) -> list[EntryChange]:
    """The paths that differ from tree `old` to tree `new`, limited to `specs` (files or folders) if
    given; a moved file is two entries (its old path deleted, its new one added)."""
    if specs == []:
        return []
    return _raw(git, old, new, _NO_RENAMES, specs)


def file_changes(git: Git, old: str, new: str) -> list[FileChange]:
    """Every file that differs from `old` to `new`, with its unified diff and line counts, in path
    order; a moved file (alike enough, as git judges it) is one change, "renamed"."""
    entries = _raw(git, old, new, _RENAMES, None)
    if not entries:
        return []
    sections = _sections(git.run("diff-tree", _RENAMES, *_PATCH_OPTIONS, old, new))
    # A type change (file to symlink) is two sections in git's patch: a deletion and a creation.
    expected = sum(2 if entry.status == "T" else 1 for entry in entries)
    changes = []
    for entry in entries:
        if expected == len(sections):
            count = 2 if entry.status == "T" else 1
            patch, sections = b"".join(sections[:count]), sections[count:]
        else:  # unexpected layout: ask for this one file (and where it moved from) alone
            paths = [entry.path] if entry.old_path is None else [entry.old_path, entry.path]
            specs = (f":(literal){path}" for path in paths)
            patch = git.run("diff-tree", _RENAMES, *_PATCH_OPTIONS, old, new, "--", *specs)
        binary = any(line.startswith(b"Binary files ") for line in patch.split(b"\n"))
        added, removed = (0, 0) if binary else _counts(patch)
        changes.append(
            FileChange(
                path=entry.path,
                status=_status(entry),
                diff="" if binary else patch.decode("utf-8", errors="replace"),
                binary=binary,
                added=added,
                removed=removed,
                old_path=entry.old_path,
                similarity=entry.score,
            )
        )
    return sorted(changes, key=lambda change: change.path)


def _raw(git: Git, old: str, new: str, renames: str, specs: list[str] | None) -> list[EntryChange]:
    """git's raw diff of two trees. With -z a line is `:modes ids status\\0path\\0`, and a rename's
    `:modes ids R<score>\\0old path\\0new path\\0`."""
    args = ["diff-tree", "-r", "-z", "--raw", "--no-abbrev", renames, old, new]
    if specs is not None:
        args += ["--", *(f":(literal){spec}" for spec in specs)]
    fields = git.run(*args).split(b"\0")
    found = []
    at = 0
    while at < len(fields):
        meta = fields[at]
        if not meta.startswith(b":"):
            at += 1
            continue
        old_mode, new_mode, old_id, new_id, status = meta[1:].decode().split(" ")
        paired = status[:1] in ("R", "C")
        paths = [os.fsdecode(path) for path in fields[at + 1 : at + (3 if paired else 2)]]
        at += 3 if paired else 2
        found.append(
            EntryChange(
                path=paths[-1],
                status=status[:1],
                old_mode=old_mode,
                new_mode=new_mode,
                old_id=old_id,
                new_id=new_id,
                old_path=paths[0] if paired else None,
                score=int(status[1:]) if paired and status[1:].isdigit() else None,
            )
        )
    return found


def _status(entry: EntryChange) -> ChangeStatus:
    if entry.status == "A":
        return "added"
    if entry.status == "D":
        return "deleted"
    if entry.status in ("R", "C"):  # no copy detection is asked for; a copy would read as a move
        return "renamed"
    if entry.old_id == entry.new_id:
        return "mode"
    return "modified"


def _counts(patch: bytes) -> tuple[int, int]:
    """Lines added and removed in a patch: '+' and '-' lines inside its hunks (the `---`/`+++`
    headers come before a section's first `@@`, so they are never counted)."""
    added = removed = 0
    in_hunk = False
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            in_hunk = False
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line.startswith(b"+"):
            added += 1
        elif in_hunk and line.startswith(b"-"):
            removed += 1
    return added, removed


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
