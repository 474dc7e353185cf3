"""The shadow repository of a workspace: snapshots of every file, kept apart from the user's git.

Each workspace gets a git repository of its own under `root/<hash of its real path>`, with its
own index; the workspace is only its work tree. The user's `.git` is never read for state or
written (git never enters a folder named `.git`), no user or system git config applies, no
hook runs, and no `.gitattributes` rule changes a byte (see `backend/checkpoints/_git.py`).

What a snapshot holds: every file of the workspace, untracked ones included, with its bytes, its
executable bit and symlinks as links. What it leaves out, and reports as `Skipped`: files over
`max_file_bytes`, the built-in build folders (`node_modules`, `.venv`, `__pycache__`), what the
workspace's `.gitignore` files (and its `.git/info/exclude`) ignore, and nested git repositories.
git keeps no folders, only files: a folder holding files comes and goes with them (a restore
removes a folder whose files it removed and recreates one it writes into), an empty folder is
not kept. Permission bits other than the executable bit are not kept (git's own limit).

A snapshot costs little when little changed, and runs in process (`backend/checkpoints/_stage.py`,
libgit2): the kernel's list of changed files (`_watch.py`) or else the index's stat cache says
what changed, only those files are hashed, then their trees are written. A snapshot is a tree
(checkpoints of earlier versions name root commits, which work alike), kept by a line in the
snapshot log until the next collecting `prune` gives it its own ref (`refs/snapshots/<id>`), so
`prune` can drop any of them without rewriting the others' ids. Two checkpoints of the same
workspace state name the same tree.

Crash safety: git and libgit2 write the index, objects and refs through lock files and renames; a
killed process's locks are cleared on next use (`ShadowLock`: only a dead holder's). A restore
writes each file beside its target and renames it into place, so every file is either as before
or as restored; the temporary files of a killed restore are listed in a journal and removed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from backend.checkpoints._git import Git, ShadowLock, create_repository
from backend.checkpoints._journal import pack_journal
from backend.checkpoints._restore import restore_files
from backend.checkpoints._stage import LATEST as _LATEST
from backend.checkpoints._stage import SNAPSHOT_REFS as _SNAPSHOTS
from backend.checkpoints._stage import Stager
from backend.checkpoints._tree_diff import changed_entries, file_changes
from backend.checkpoints.usage import folder_bytes
from backend.checkpoints.values import FileChange, Skipped, Snapshot, UnknownCommit

_COMMIT_ID = re.compile(r"[0-9a-f]{7,64}")

SMALL_FILES, SMALL_BYTES = 16, 256 * 1024
"""A snapshot of at most this many changed files, this many bytes in all, may run inline (the
hashing of 256 KB is well under a millisecond)."""


class ShadowRepo:
    """Snapshots of one workspace in its shadow repository; synchronous (callers use `asyncio.to_thread`)."""

    def __init__(
        self, workspace: Path, *, root: Path, max_file_bytes: int = 5 * 1024 * 1024, watch: bool = True
    ) -> None:
        """root: the folder holding every workspace's shadow repository (settings.checkpoints_dir,
        default <data dir>/checkpoints); this workspace's is root/<hash of its real path>.
        watch: learn from the kernel which files changed (`_watch.py`), instead of looking at all."""
        real = Path(os.path.realpath(workspace))
        if not real.is_dir():
            raise ValueError(f"workspace {workspace} is not a folder")
        if max_file_bytes < 0:
            raise ValueError(f"max_file_bytes must be 0 or more, not {max_file_bytes}")
        real_root = Path(os.path.realpath(root))
        if real_root == real or real in real_root.parents:
            raise ValueError(f"the checkpoints folder {root} lies inside the workspace {workspace}")
        self.workspace = real
        self.max_file_bytes = max_file_bytes
        self.git_dir = real_root / hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
        self._git = Git(self.git_dir, real)
        self._stager: Stager | None = None  # opened on first use, under the lock
        self._lock = ShadowLock(self.git_dir)
        self._stager_generation = 0
        self._watch = watch

    def snapshot_if_small(self) -> Snapshot | None:
        """`snapshot()` on the caller's own thread when it is sure to be quick (a few small files
        changed, as the kernel said; nothing else holds the repository; no index to write), else
        None, touching nothing: then `snapshot()`, on a worker thread. A hop to a thread and back
        costs a step more CPU than such a snapshot itself (GIL hand-overs around each libgit2 call)."""
        with self._lock.held_if_free() as free:
            if not free:
                return None
            stager = self._stager
            if stager is None or self._stager_generation != self._lock.generation:
                return None  # opening it, or again after a prune, is the worker's
            staged = stager.stage_small(SMALL_FILES, SMALL_BYTES)
            if staged is None:
                return None
            tree, skipped = staged
            return Snapshot(commit=stager.keep(tree), skipped=tuple(skipped))

    def snapshot(self) -> Snapshot:
        """The whole workspace now, untracked files included (see the module's docstring)."""
        with self._held(settle=False):  # it reads no object git must find (see `_journal.py`)
            stager = self._open_stager()
            tree, skipped = stager.stage()
            kept = stager.keep(tree)
        return Snapshot(commit=kept, skipped=tuple(skipped))

    def settle(self) -> None:
        """Every object of every snapshot in git's own store (the journal packed, see
        `_journal.py`), for a program that reads the repository by itself. Whatever this class
        does that reads objects settles first."""
        with self._held():
            pass

    def changes(self, before: str, after: str | None = None) -> list[FileChange]:
        """The files that differ from `before` to `after` (a commit, or None: the workspace now), by path."""
        with self._held():
            old = self._resolve(before)
            new = self._resolve(after) if after is not None else self._stage()[0]
            return file_changes(self._git, old, new)

    def restore(self, commit: str, paths: Sequence[str] | None = None) -> list[str]:
        """Make the workspace match `commit` for `paths` (files or folders, workspace-relative; all
        when None): changed files rewritten, deleted ones recreated, files made since removed, byte
        for byte with their executable bit. Skipped and ignored files are never removed. Returns the
        paths written or removed, sorted."""
        specs = None if paths is None else [self._relative(path) for path in paths]
        with self._held():
            target = self._resolve(commit)
            current, _ = self._stage()
            entries = changed_entries(self._git, current, target, specs)
            return restore_files(self._git, entries)

    def disk_bytes(self) -> int:
        """What the shadow repository takes on disk, in bytes (0 before the first snapshot)."""
        return folder_bytes(self.git_dir)

    def prune(self, keep: Sequence[str]) -> None:
        """Drop every snapshot not in `keep`, and the objects only they reached (a walk of the
        whole repository: the periodic sweep's, not a step's). A kept id that is not here
        (already pruned) is ignored; a malformed one is an error. Nothing to drop: nothing done."""
        wanted = set()
        for commit in keep:
            if not _COMMIT_ID.fullmatch(commit):
                raise UnknownCommit(f"{commit!r} is not a commit id")
            wanted.add(commit)
        with self._held(settle=False):  # the refs and the log are read first: objects only if something goes
            stager = self._open_stager()
            refs = stager.snapshot_refs()
            logged = stager.logged()
            if not refs and not logged:
                return
            # A state the workspace came back to is logged again: once is enough.
            shortened = [commit for commit in wanted if len(commit) < 40]
            kept_logged = list(dict.fromkeys(commit for commit in logged if _kept(commit, wanted, shortened)))
            # `latest` (written by earlier versions) goes, so it keeps nothing alive.
            dropped = [ref for ref, commit in refs.items() if ref == _LATEST or not _kept(commit, wanted, shortened)]
            if not dropped and len(kept_logged) == len(set(logged)):
                return  # every snapshot is kept: no object can have become unreachable
            stager.settle()  # git's prune and repack walk objects
            try:
                if kept_logged:
                    # git's prune and repack keep only what refs reach: the logged ones get refs.
                    commands = "".join(f"create {_SNAPSHOTS}{c} {c}\n" for c in kept_logged if f"{_SNAPSHOTS}{c}" not in refs)
                    self._git.run("update-ref", "--stdin", stdin=commands.encode())
                stager.empty_log()
                stager.delete_refs(dropped)
                self._git.run("pack-refs", "--all", "--prune")  # one file, not one per snapshot
                self._git.run("prune", "--expire=now")
                if any((self.git_dir / "objects" / "pack").glob("*.pack")):
                    self._git.run("repack", "-a", "-d", "-q")
            finally:
                # Another process keeping the repository open must open it again: its snapshot
                # log is a replaced file, and objects it knows may be gone.
                self._lock.bump()
            self._drop_stager()  # so may this one's: open again

    def snapshots(self) -> list[str]:
        """The ids of the snapshots kept (in no particular order)."""
        with self._held():
            stager = self._open_stager()
            refs = stager.snapshot_refs()
            logged = stager.logged()
        return list(dict.fromkeys([c for ref, c in refs.items() if ref != _LATEST] + logged))

    @contextmanager
    def _held(self, *, settle: bool = True) -> Iterator[None]:
        """The repository held whole; with `settle`, its journal packed first (git and libgit2
        read objects only from their store)."""
        create_repository(self.git_dir, self.workspace)
        with self._lock.held():
            if self._stager is not None and self._stager_generation != self._lock.generation:
                # Pruned since it was opened (by another process, say): its index in memory and
                # its list of packs may name objects that are gone.
                self._drop_stager()
            if settle:
                if self._stager is not None:
                    self._stager.settle()
                else:
                    pack_journal(self.git_dir)
            yield

    def _resolve(self, commit: str) -> str:
        if not _COMMIT_ID.fullmatch(commit):
            raise UnknownCommit(f"{commit!r} is not a commit id")
        # A snapshot is a tree; a checkpoint taken by an earlier version names a commit of one.
        answer = self._git.run("rev-parse", "--verify", "-q", f"{commit}^{{tree}}", ok=(0, 1))
        found = answer.decode().strip()
        if not found:
            raise UnknownCommit(f"no checkpoint {commit} in the shadow repository of {self.workspace}")
        return found

    def _relative(self, path: str) -> str:
        if not path or "\0" in path:
            raise ValueError(f"{path!r} is not a path")
        pure = PurePosixPath(path)
        if pure.is_absolute():
            try:
                pure = pure.relative_to(PurePosixPath(self.workspace))
            except ValueError:
                raise ValueError(f"{path} is not inside the workspace {self.workspace}") from None
        if ".." in pure.parts:
            raise ValueError(f"{path} leaves the workspace (it holds '..')")
        if ".git" in pure.parts:
            raise ValueError(f"{path} is inside a .git folder, which checkpoints never hold")
        return str(pure)

    def _stage(self) -> tuple[str, list[Skipped]]:
        """The workspace now, for a reader: its objects settled, so git finds them."""
        stager = self._open_stager()
        staged = stager.stage()
        stager.settle()
        return staged

    def _drop_stager(self) -> None:
        if self._stager is not None:
            self._stager.close()
            self._stager = None

    def _open_stager(self) -> Stager:
        if self._stager is None:
            self._stager = Stager(self.git_dir, self.workspace, self.max_file_bytes, watch=self._watch)
            self._stager_generation = self._lock.generation
        return self._stager


def _kept(commit: str, wanted: set[str], shortened: list[str]) -> bool:
    # Whole ids (a checkpoint row's) by one lookup; only shortened ones are matched as prefixes.
    return commit in wanted or any(commit.startswith(prefix) for prefix in shortened)
