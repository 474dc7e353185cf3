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

A snapshot costs little when little changed: `git status` finds what changed through git's stat
cache, only those files are hashed (`update-index`), then `write-tree`, `commit-tree` and one
ref transaction. Each snapshot is a root commit with its own ref (`refs/snapshots/<id>`), so
`prune` can drop any of them without rewriting the others' ids.

Crash safety: git writes its index, objects and refs through lock files and renames; a killed
process's locks are cleared on next use (under an flock, so only a dead holder's). A restore
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

from backend.checkpoints._git import BUILT_IN_IGNORED, Git, create_repository, shadow_lock
from backend.checkpoints._restore import restore_files
from backend.checkpoints._tree_diff import changed_entries, file_changes
from backend.checkpoints.values import FileChange, Skipped, Snapshot, UnknownCommit

_COMMIT_ID = re.compile(r"[0-9a-f]{7,64}")
_LATEST = "refs/heads/latest"
_SNAPSHOTS = "refs/snapshots/"


class ShadowRepo:
    """Snapshots of one workspace in its shadow repository; synchronous (callers use `asyncio.to_thread`)."""

    def __init__(self, workspace: Path, *, root: Path, max_file_bytes: int = 5 * 1024 * 1024) -> None:
        """root: the folder holding every workspace's shadow repository (settings.checkpoints_dir,
        default <data dir>/checkpoints); this workspace's is root/<hash of its real path>."""
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

    def snapshot(self, message: str) -> Snapshot:
        """The whole workspace now, untracked files included (see the module's docstring)."""
        with self._held():
            tree, skipped = self._stage()
            commit = self._git.run("commit-tree", tree, "-F", "-", stdin=message.encode()).decode().strip()
            # One transaction: the snapshot's own ref, and `latest` (HEAD) for the next status.
            refs = f"create {_SNAPSHOTS}{commit} {commit}\nupdate {_LATEST} {commit}\n"
            self._git.run("update-ref", "--stdin", stdin=refs.encode())
        return Snapshot(commit=commit, skipped=tuple(skipped))

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
        total = 0
        for folder, _dirs, files in os.walk(self.git_dir):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except FileNotFoundError:
                    pass
        return total

    def prune(self, keep: Sequence[str]) -> None:
        """Drop every snapshot not in `keep` and the objects only they reached. A kept id that is
        not here (already pruned) is ignored; a malformed one is an error."""
        wanted = set()
        for commit in keep:
            if not _COMMIT_ID.fullmatch(commit):
                raise UnknownCommit(f"{commit!r} is not a commit id")
            wanted.add(commit)
        with self._held():
            listing = self._git.run("for-each-ref", "--format=%(objectname) %(refname)", _SNAPSHOTS, _LATEST)
            refs = dict(line.split(" ", 1)[::-1] for line in listing.decode().splitlines())
            if not refs:
                return
            snapshots = {ref: commit for ref, commit in refs.items() if ref.startswith(_SNAPSHOTS)}
            kept = [commit for commit in snapshots.values() if _kept(commit, wanted)]
            dropped = {ref: commit for ref, commit in snapshots.items() if not _kept(commit, wanted)}
            commands = [f"delete {ref} {commit}" for ref, commit in dropped.items()]
            if _LATEST in refs and not _kept(refs[_LATEST], wanted):
                commands.append(f"update {_LATEST} {kept[-1]}" if kept else f"delete {_LATEST}")
            if commands:
                self._git.run("update-ref", "--stdin", stdin="".join(c + "\n" for c in commands).encode())
            self._git.run("pack-refs", "--all", "--prune")  # one file, not one per snapshot
            self._git.run("prune", "--expire=now")
            if any((self.git_dir / "objects" / "pack").glob("*.pack")):
                self._git.run("repack", "-a", "-d", "-q")

    def snapshots(self) -> list[str]:
        """The commit ids of the snapshots kept (in no particular order)."""
        with self._held():
            listing = self._git.run("for-each-ref", "--format=%(objectname)", _SNAPSHOTS)
        return listing.decode().split()

    @contextmanager
    def _held(self) -> Iterator[None]:
        create_repository(self.git_dir, self.workspace)
        with shadow_lock(self.git_dir):
            yield

    def _resolve(self, commit: str) -> str:
        if not _COMMIT_ID.fullmatch(commit):
            raise UnknownCommit(f"{commit!r} is not a commit id")
        answer = self._git.run("rev-parse", "--verify", "-q", f"{commit}^{{commit}}", ok=(0, 1))
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
        """Bring the shadow index up to the workspace (hashing only what git's stat cache says
        changed) and write its tree; returns the tree id and what was left out."""
        status = self._git.run(
            "status", "--porcelain=v1", "-z", "-uall", "--ignored=matching", "--no-renames"
        )
        skipped: list[Skipped] = []
        candidates: list[tuple[bytes, str]] = []
        update: list[str] = []
        untrack: list[str] = []
        for entry in status.split(b"\0"):
            if not entry:
                continue
            code, path = entry[:2], os.fsdecode(entry[3:])
            if code == b"!!":
                skipped.append(Skipped(path=path.rstrip("/"), reason=_ignored_reason(path)))
            elif code == b"??" and path.endswith("/"):
                skipped.append(Skipped(path=path.rstrip("/"), reason="nested git repository"))
            elif code == b"??" or code[1:] in (b"M", b"T"):
                candidates.append((code, path))
            elif code[1:] == b"D":
                update.append(path)
        for code, path in candidates:
            try:
                info = os.lstat(self.workspace / path)
            except FileNotFoundError:
                update.append(path)
                continue
            if _is_regular(info.st_mode) and not os.access(self.workspace / path, os.R_OK):
                skipped.append(Skipped(path=path, reason="unreadable"))
                if code != b"??":
                    untrack.append(path)
            elif _is_regular(info.st_mode) and info.st_size > self.max_file_bytes:
                skipped.append(Skipped(path=path, reason=_over(self.max_file_bytes)))
                if code != b"??":  # it grew past the limit: out of the index too
                    untrack.append(path)
            else:
                update.append(path)
        if untrack:
            self._git.run("update-index", "--force-remove", "-z", "--stdin", stdin=_nul_list(untrack))
        if update:
            update_index = ("update-index", "--add", "--remove", "--replace", "-z", "--stdin")
            self._git.run(*update_index, stdin=_nul_list(update))
        tree = self._git.run("write-tree").decode().strip()
        return tree, sorted(skipped, key=lambda s: s.path)


def _kept(commit: str, wanted: set[str]) -> bool:
    return any(commit.startswith(prefix) for prefix in wanted)


def _is_regular(mode: int) -> bool:
    return (mode & 0o170000) == 0o100000


def _nul_list(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _ignored_reason(path: str) -> str:
    parts = path.rstrip("/").split("/")
    for name in BUILT_IN_IGNORED:
        if name in parts:
            return f"ignored ({name})"
    return "ignored (.gitignore)"


def _over(limit: int) -> str:
    mib = 1024 * 1024
    return f"over {limit // mib} MB" if limit and limit % mib == 0 else f"over {limit} bytes"
