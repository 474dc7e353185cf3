"""A snapshot in process: the shadow index brought up to the workspace, and its tree.

This is the path every checkpointed step takes, so it runs inside the host through libgit2
(pygit2) instead of starting five git processes (status, update-index, write-tree, commit-tree,
update-ref cost ~10 ms of host CPU per step), and it writes as little as it can: the objects of
what changed (a blob per file, a tree per folder on its way), made in memory (`_trees.py`) and
appended to the object journal in one write (`_journal.py`) when a few files changed; one line
appended to the snapshot log instead of a ref; and the index only now and then. A snapshot is
its tree: a commit around it would say nothing a checkpoint's row does not. Everything else a
shadow repository does (diff, restore, prune) is rare and stays with the git program.

Both speak the same repository: libgit2 reads and writes git's index, objects and refs in git's
formats and through the same lock files, and takes its settings from the shadow repository's
own config (written by `ensure_config`), never from the user's or the system's: the search paths
of global, XDG and system config are emptied for the whole process, which holds no other
libgit2 repository.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pygit2
from pygit2.enums import ConfigLevel, DeltaStatus, DiffOption, FileMode, RepositoryOpenFlag

from backend.checkpoints._git import BUILT_IN_IGNORED, CONFIG
from backend.checkpoints._journal import BLOB, Journal, pack_journal
from backend.checkpoints._trees import Blob, Trees, read_blob
from backend.checkpoints._watch import WorkspaceWatch
from backend.checkpoints.values import Skipped

SNAPSHOT_LOG = "snapshots.log"
"""In the shadow repository: the id (tree; commit for older ones) of each snapshot kept and not
yet given a ref, a line each."""
SNAPSHOT_REFS = "refs/snapshots/"
LATEST = "refs/heads/latest"

FEW_FILES = 64
"""At most this many changed files are stored through the journal (`_journal.py`); more go
through the index, each object a file, as git stores them."""

INDEX_WRITE_AFTER_FILES = 64
INDEX_WRITE_AFTER_S = 10.0
"""The index is git's stat cache, nothing more: the one in memory is current, and the one on disk
is written when this many files changed or this long passed, instead of after every snapshot.
A process that reads a stale one (after a restart) hashes again only the files changed since."""

for _level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM, ConfigLevel.PROGRAMDATA):
    pygit2.settings.search_path[_level] = ""
# The shadow repository is ours; who owns the workspace does not matter to it.
pygit2.settings.owner_validation = False
# A tree is written from the index (whose blobs were written or kept, see ShadowRepo's prune
# generation): reading each object back to check it is a cost per
# file per snapshot that buys nothing here.
pygit2.settings.enable_strict_object_creation(False)

_COMMIT = re.compile(r"[0-9a-f]{40}")
_UNTOLD = object()  # a path the index was told nothing of since it was last brought up to date
_UNSEEN = object()  # a path stage_small did not lstat
_EUID = os.geteuid()
# UPDATE_INDEX: an entry the few-files path added (`_apply_few`) has no stat data, so the
# first full look hashes it; this keeps what it learnt (libgit2 writes the index then).
_DIFF_FLAGS = (
    DiffOption.UPDATE_INDEX
    | DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.INCLUDE_IGNORED
    | DiffOption.INCLUDE_TYPECHANGE
)


class Stager:
    """The shadow repository of one workspace, opened once and kept (callers hold its lock)."""

    def __init__(self, git_dir: Path, workspace: Path, max_file_bytes: int, *, watch: bool = True) -> None:
        """`watch`: ask the kernel what changed (`_watch.py`); without, every snapshot looks at every file."""
        self.workspace = workspace
        self.max_file_bytes = max_file_bytes
        self.git_dir = git_dir
        self._repo = pygit2.Repository(str(git_dir), flags=RepositoryOpenFlag.NO_SEARCH)
        self._log: int | None = None
        self._last: str | None = None  # the last snapshot kept here
        self._unwritten = 0
        self._written_at = time.monotonic()
        self._repo.workdir = str(workspace)
        ensure_config(self._repo.config, workspace)
        self._watch = WorkspaceWatch(workspace, skip=self._unwatched)
        self._watch.usable = self._watch.usable and watch
        self._skipped: dict[str, Skipped] = {}  # what the last snapshot left out, by path
        self._tracked_folders: set[str] | None = None  # folders holding a file of the index (made when asked)
        self._index_stamp: tuple[int, int, int] | None = None  # the index file as we last knew it
        self._index_path = os.path.join(git_dir, "index")
        self._root = str(workspace)  # strings, not Paths: this runs before every step
        self._journal = Journal(git_dir)
        self._trees = Trees(self._repo, self._journal)
        self._index = self._repo.index  # the repository's one index (`repo.index` makes a new wrapper each time)
        self._behind: dict[str, tuple[bytes, int] | None] = {}
        """What the few-files path changed that the index has not taken yet, by path: a blob's
        raw id and mode, or None (removed). Only a path's last change is kept, so a file written
        at every step costs the index one entry when it is next read or written (`_index_now`)."""

    def stage(self) -> tuple[str, list[Skipped]]:
        """Bring the shadow index up to the workspace and write its tree; returns the tree id and
        what was left out. Only the files the kernel says changed are looked at when it can say
        (`_watch.py`); otherwise every file, through the index's stat cache."""
        if self._journal.full:
            self.settle()
        changed = self._watch.changed()
        stamp = _stamp(self._index_path)
        if stamp != self._index_stamp:  # another process (a rewind from the CLI) wrote it
            self._behind.clear()  # as what it holds in memory, the index read replaces
            self._index.read(force=False)
            changed = None
            self._trees.reset(None)  # the look that follows is from its index, not our last tree
        return self._stage(changed, stamp, index_write=True)

    def stage_small(self, max_files: int, max_bytes: int) -> tuple[str, list[Skipped]] | None:
        """`stage()` when the kernel's list holds at most `max_files` files of `max_bytes` in all
        and the index is not due to be written: cheap enough for the caller's own thread, and it
        writes nothing but the journal and the snapshot log (no git lock file).
        Else None, touching nothing: what was read from the kernel is kept for `stage()`."""
        if _stamp(self._index_path) != self._index_stamp:
            return None
        changed = self._watch.peek()
        if changed is None or len(changed) > max_files or self._index_due(len(changed)) or self._journal.full:
            return None
        seen: dict[str, os.stat_result | None] = {}
        total = 0
        for path in changed:
            try:
                info = os.lstat(os.path.join(self._root, path))
            except FileNotFoundError:
                seen[path] = None  # gone: nothing to read
                continue
            except OSError:
                continue  # the look decides, as for any path
            seen[path] = info
            total += info.st_size
        if total > max_bytes:
            return None
        self._watch.take_peeked()  # events since are the next snapshot's
        return self._stage(changed, self._index_stamp, index_write=False, seen=seen)

    def _stage(
        self,
        changed: set[str] | None,
        stamp: tuple[int, int, int] | None,
        *,
        index_write: bool,
        seen: dict[str, os.stat_result | None] | None = None,
    ) -> tuple[str, list[Skipped]]:
        """`seen`: what stage_small's lstat of each changed path found (None: gone), not asked again."""
        removals: list[str] = []
        additions: list[str] = []
        tree: pygit2.Oid | None = None
        if changed is None:
            self._skipped = self._look_at_all(self._index_now(), removals, additions)
            stamp = _stamp(self._index_path)  # the look may have written the stat cache
        else:
            self._look_at(changed, removals, additions, seen or {})
        if len(additions) <= FEW_FILES:  # their bytes are held until the one write
            tree = self._apply_few(removals, additions, seen or {})
        if tree is None:
            if self._journal.objects:
                self.settle()  # the index's own tree may name what only the journal holds
            index = self._index_now()
            # Removals first: a file that became a folder (or the reverse) frees its name
            # before the new entries take it.
            for path in removals:
                index.remove(path)
            for path in additions:
                index.add(path)
            tree = index.write_tree()
            self._trees.reset(tree)
            self._unwritten += len(removals) + len(additions)
        if removals or additions:
            self._tracked_folders = None
        if index_write and self._index_due(0):
            self._index_now().write()
            self._unwritten, self._written_at = 0, time.monotonic()
            stamp = _stamp(self._index_path)
        self._index_stamp = stamp
        return str(tree), sorted(self._skipped.values(), key=lambda s: s.path)

    def _apply_few(
        self, removals: list[str], additions: list[str], seen: dict[str, os.stat_result | None]
    ) -> pygit2.Oid | None:
        """The kernel's few changes made into blobs and trees of their own (`_trees.py`), their
        new objects appended to the journal in one write, the index told (`_behind`); None, touching
        nothing, when a file is not one this can store or the trees do not fit (the index adds
        them itself then)."""
        if not self._trees.ready:  # (a full journal was packed before: `stage`, `stage_small`)
            return None
        blobs: dict[str, Blob] = {}
        if additions:
            root = os.open(self._root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                for path in additions:
                    info = seen.get(path)
                    kind = info.st_mode & 0o170000 if info is not None else None
                    blob = read_blob(root, path, self.max_file_bytes, kind)
                    if blob is None:
                        return None
                    blobs[path] = blob
            finally:
                os.close(root)
        built = self._trees.apply(removals, blobs)
        if built is None:
            return None
        tree, trees = built
        try:
            self._journal.append([(blob.id, BLOB, blob.data) for blob in blobs.values()] + trees)
        except BaseException:
            self._trees.reset(None)  # it holds a tree nothing stored
            raise
        behind = self._behind
        for path in removals:
            behind[path] = None
        for path, blob in blobs.items():
            behind[path] = (blob.id, blob.mode)
        return pygit2.Oid(hex=tree)

    def _index_now(self) -> pygit2.Index:
        """The index with what the few-files path changed put in (before it is read or written)."""
        if self._behind:
            index = self._index
            for path, entry in self._behind.items():
                if entry is None:
                    if path in index:  # it may have been added since the last time the index was told
                        index.remove(path)
                else:
                    index.add(pygit2.IndexEntry(path, pygit2.Oid(raw=entry[0]), FileMode(entry[1])))
            self._unwritten += len(self._behind)
            self._behind.clear()
        return self._index

    def settle(self) -> None:
        """The journal packed into git's store (see `_journal.py`): for whatever reads objects
        through git or libgit2 next. Call with the repository's lock held."""
        pack_journal(self.git_dir)
        self._journal.packed()

    def _index_due(self, changing: int) -> bool:
        return (
            self._unwritten + len(self._behind) + changing >= INDEX_WRITE_AFTER_FILES
            or time.monotonic() - self._written_at > INDEX_WRITE_AFTER_S
        )

    def close(self) -> None:
        """Let go of the workspace's watch and the journal (the Stager is being dropped)."""
        self._watch.close()
        self._journal.close()

    def _look_at(
        self, paths: set[str], removals: list[str], additions: list[str], seen: dict[str, os.stat_result | None]
    ) -> None:
        """The changed files only (none of them a folder: a folder's change makes the watch
        answer None). Decides each as the full look would."""
        index, behind = self._index, self._behind
        for path in paths:
            self._skipped.pop(path, None)
            told = behind.get(path, _UNTOLD)
            tracked = path in index if told is _UNTOLD else told is not None
            info = seen.get(path, _UNSEEN)
            if not tracked:
                # Gone and never kept (a tool's temporary file, renamed into place): nothing
                # to do, and no ignore rules to read for it.
                if info is None or (info is _UNSEEN and not os.path.lexists(os.path.join(self._root, path))):
                    continue
                # As git: ignore rules apply to untracked files only.
                if self._repo.path_is_ignored(path):
                    self._skipped[path] = Skipped(path=path, reason=_ignored_reason(path))
                    continue
            left_out = self._sort(path, tracked, removals, additions, info)
            if left_out is not None:
                self._skipped[path] = left_out

    def _look_at_all(self, index: pygit2.Index, removals: list[str], additions: list[str]) -> dict[str, Skipped]:
        """Every file, through the index's stat cache (only what it says changed is hashed)."""
        skipped: list[Skipped] = []
        # The index against the workspace only: `status` would also compare it with HEAD, which
        # names no snapshot here, and report every file.
        for delta in index.diff_to_workdir(_DIFF_FLAGS).deltas:
            path, status = delta.new_file.path, delta.status
            if status == DeltaStatus.IGNORED:
                skipped.append(Skipped(path=path.rstrip("/"), reason=_ignored_reason(path)))
            elif status == DeltaStatus.UNTRACKED and path.endswith("/"):
                skipped.append(Skipped(path=path.rstrip("/"), reason="nested git repository"))
            elif status == DeltaStatus.DELETED:
                removals.append(path)
            elif status in (DeltaStatus.UNTRACKED, DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
                left_out = self._sort(path, status != DeltaStatus.UNTRACKED, removals, additions)
                if left_out is not None:
                    skipped.append(left_out)
        return {s.path: s for s in skipped}

    def _sort(
        self, path: str, tracked: bool, removals: list[str], additions: list[str], info: object = _UNSEEN
    ) -> Skipped | None:
        """A file that changed: into the index, out of it, or left out (returned, with why).
        `info`: its lstat if known (None: gone), else `_UNSEEN`."""
        reason = self._left_out(path, info)
        if reason == "gone":
            if tracked:
                removals.append(path)
            return None
        if reason is not None:
            if tracked:  # it grew past the limit, or became unreadable: out of the index too
                removals.append(path)
            return Skipped(path=path, reason=reason)
        additions.append(path)
        return None

    def keep(self, tree: str) -> str:
        """Keep `tree` as a snapshot, by a line in the snapshot log (not again if it is the last
        one kept here: a step that wrote nothing costs nothing); returns its id, the tree's."""
        if self._last == tree:
            return tree
        if self._log is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._log = os.open(self.git_dir / SNAPSHOT_LOG, flags, 0o600)
        os.write(self._log, f"{tree}\n".encode())  # one short append: whole or not at all
        self._last = tree
        return tree

    def logged(self) -> list[str]:
        """The snapshots the log keeps (their ids)."""
        try:
            text = (self.git_dir / SNAPSHOT_LOG).read_text()
        except FileNotFoundError:
            return []
        return [line for line in text.split("\n") if _COMMIT.fullmatch(line)]

    def empty_log(self) -> None:
        """The snapshot log emptied, atomically (a prune's, once every snapshot kept has a ref;
        other processes open the repository again: see ShadowLock's generation)."""
        temporary = self.git_dir / f"{SNAPSHOT_LOG}.new"
        temporary.write_text("")
        os.replace(temporary, self.git_dir / SNAPSHOT_LOG)
        self._last = None  # the log no longer keeps it: a later unchanged snapshot is logged again
        if self._log is not None:  # it appends to the replaced file: the next snapshot opens the new one
            os.close(self._log)
            self._log = None

    def snapshot_refs(self) -> dict[str, str]:
        """Snapshots given refs by a collecting prune (and `latest`, from earlier versions): ref -> id."""
        return {
            ref.name: str(ref.target)
            for ref in self._repo.references.iterator()
            if ref.name.startswith(SNAPSHOT_REFS) or ref.name == LATEST
        }

    def delete_refs(self, names: list[str]) -> None:
        for name in names:
            self._repo.references.delete(name)

    def _unwatched(self, folder: str) -> bool:
        """Folders whose files never reach a snapshot: ignored ones and nested repositories,
        unless the index tracks a file in them (as git: ignoring does not untrack)."""
        if not (self._repo.path_is_ignored(folder + "/") or os.path.lexists(os.path.join(self._root, folder, ".git"))):
            return False
        if self._tracked_folders is None:
            tracked: set[str] = set()
            for entry in self._index_now():
                parent = entry.path.rpartition("/")[0]
                while parent and parent not in tracked:
                    tracked.add(parent)
                    parent = parent.rpartition("/")[0]
            self._tracked_folders = tracked
        return folder not in self._tracked_folders

    def _left_out(self, path: str, info: object = _UNSEEN) -> str | None:
        full = os.path.join(self._root, path)
        if not isinstance(info, os.stat_result):
            if info is None:
                return "gone"
            try:
                info = os.lstat(full)
            except FileNotFoundError:
                return "gone"
        if _is_regular(info.st_mode):
            # Its owner with the read bit can read it (no ACL takes that away): no access() then.
            owner_reads = info.st_uid == _EUID and info.st_mode & 0o400
            if not owner_reads and not os.access(full, os.R_OK):
                return "unreadable"
            if info.st_size > self.max_file_bytes:
                return _over(self.max_file_bytes)
        return None


def ensure_config(config: pygit2.Config, workspace: Path) -> None:
    """The shadow repository's config says what the git program is told with `-c` on every run
    (libgit2 takes no `-c`): written once, when a value is missing or differs."""
    wanted = {**CONFIG, "core.excludesFile": str(workspace / ".git" / "info" / "exclude")}
    for key, value in wanted.items():
        try:
            current = config[key]
        except KeyError:
            current = None
        if current != value:
            config[key] = value


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _is_regular(mode: int) -> bool:
    return (mode & 0o170000) == 0o100000


def _ignored_reason(path: str) -> str:
    parts = path.rstrip("/").split("/")
    for name in BUILT_IN_IGNORED:
        if name in parts:
            return f"ignored ({name})"
    return "ignored (.gitignore)"


def _over(limit: int) -> str:
    mib = 1024 * 1024
    return f"over {limit // mib} MB" if limit and limit % mib == 0 else f"over {limit} bytes"
