"""A snapshot's tree made from the last one and the few files that changed.

`Index.write_tree()` rebuilds the trees the index changed and then reads each one back from
disk for its tree cache; `Index.add(path)` looks up `.gitattributes` in three places and
resolves the path's real name, twice, before it hashes the file; and each writes its objects as
a file apiece. For the handful of files a step changes that was most of a snapshot's cost. Here
a blob is the bytes read (the shadow repository applies no filter: see `_git.py`'s
`info/attributes`), the trees are kept in memory per folder from the last snapshot, and only
the changed files' folders, and theirs up to the root, are hashed again. Nothing is written
here: the caller appends the new objects to the journal (`_journal.py`) in one write.

The caller keeps the index in step (`Index.add(IndexEntry)`, `Index.remove`), so the next tree
the index writes itself (a full look) is the one made here. Anything this does not expect (a
name that is a file in one and a folder in the other, a removal of what the tree does not hold)
answers None, and the caller lets the index write the tree instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pygit2

from backend.checkpoints._journal import BLOB, TREE, Journal, object_id

FOLDER, FILE, EXECUTABLE, LINK = 0o040000, 0o100644, 0o100755, 0o120000
_REGULAR = 0o100000

MAX_FOLDERS = 256
"""Folders kept in memory between snapshots; past it they are let go (and read again when used)."""



class Folder:
    """One folder's tree: its entries, and each entry's line of the tree as git writes it, kept
    in git's order, so a tree of many entries is joined again, not formatted and sorted again,
    when one of its files changed."""

    __slots__ = ("entries", "_lines", "_order")

    def __init__(self) -> None:
        self.entries: dict[bytes, tuple[int, bytes]] = {}
        self._lines: dict[bytes, bytes] = {}
        self._order: list[bytes] | None = []

    @classmethod
    def parse(cls, body: bytes) -> Folder:
        folder = cls()
        offset = 0
        while offset < len(body):
            space = body.index(b" ", offset)
            nul = body.index(b"\0", space)
            name = body[space + 1 : nul]
            folder.entries[name] = (int(body[offset:space], 8), body[nul + 1 : nul + 21])
            folder._lines[name] = body[offset : nul + 21]
            offset = nul + 21
        folder._order = None  # as stored; sorted again once, on first use
        return folder

    def get(self, name: bytes) -> tuple[int, bytes] | None:
        return self.entries.get(name)

    def put(self, name: bytes, mode: int, oid: bytes) -> None:
        before = self.entries.get(name)
        if before is None or (before[0] == FOLDER) != (mode == FOLDER):
            self._order = None  # a new name, or one that sorts as a folder now: the order changes
        self.entries[name] = (mode, oid)
        self._lines[name] = b"%o %s\0%s" % (mode, name, oid)

    def pop(self, name: bytes) -> tuple[int, bytes] | None:
        entry = self.entries.pop(name, None)
        if entry is not None:
            del self._lines[name]
            self._order = None
        return entry

    def body(self) -> bytes:
        """The tree's bytes: entries by name, a folder's as if it ended in `/`."""
        if self._order is None:
            entries = self.entries
            self._order = sorted(entries, key=lambda name: name + b"/" if entries[name][0] == FOLDER else name)
        return b"".join(map(self._lines.__getitem__, self._order))

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, slots=True)
class Blob:
    """A file's content as stored (a link's: its target), its raw id and its mode in the tree."""

    id: bytes
    mode: int
    data: bytes


class _Unexpected(Exception):
    """The tree and the changes do not fit together: the index writes this tree instead."""


class Trees:
    """The last snapshot's tree of one shadow repository, as the folders used, in memory."""

    def __init__(self, repo: pygit2.Repository, journal: Journal) -> None:
        self._repo = repo
        self._journal = journal
        self._root: bytes | None = None
        self._folders: dict[str, Folder] = {}

    @property
    def ready(self) -> bool:
        """Whether the last snapshot's tree is known (`apply` can work from it)."""
        return self._root is not None

    def reset(self, tree: pygit2.Oid | None) -> None:
        """The last snapshot is `tree` (written by the index); None: unknown, `apply` declines."""
        self._root = None if tree is None else tree.raw
        self._folders.clear()

    def apply(self, removals: list[str], blobs: dict[str, Blob]) -> tuple[str, list[tuple[bytes, int, bytes]]] | None:
        """The tree of the last snapshot with `removals` taken out and `blobs` put in (paths
        relative, `/`-separated): its id and the trees to store for it (id, type, bytes); None
        when it cannot say (then it forgets what it held, and the index writes the tree)."""
        if self._root is None:
            return None
        if len(self._folders) > MAX_FOLDERS:
            self._folders.clear()
        try:
            changed: set[str] = set()
            for path in removals:
                folder, name = _split(path)
                entries = self._folder(folder, make=False)
                if entries is None or entries.pop(name) is None:
                    raise _Unexpected(path)
                changed.add(folder)
            for path, blob in blobs.items():
                folder, name = _split(path)
                entries = self._folder(folder, make=True)
                assert entries is not None
                present = entries.get(name)
                if present is not None and present[0] == FOLDER:
                    raise _Unexpected(path)
                entries.put(name, blob.mode, blob.id)
                changed.add(folder)
            records = self._write(changed)
        except (_Unexpected, KeyError, ValueError, UnicodeError, pygit2.GitError):
            self.reset(None)  # the folders may hold half the change
            return None
        assert self._root is not None
        return self._root.hex(), records

    def _folder(self, folder: str, *, make: bool) -> Folder | None:
        """The entries of `folder` ("" for the root); a missing folder is made empty with
        `make`, else None."""
        entries = self._folders.get(folder)
        if entries is not None:
            return entries
        if not folder:
            assert self._root is not None
            entries = self._read(self._root)
        else:
            parent, name = _split(folder)
            above = self._folder(parent, make=make)
            if above is None:
                return None
            entry = above.get(name)
            if entry is None:
                if not make:
                    return None
                entries = Folder()
            elif entry[0] != FOLDER:
                raise _Unexpected(folder)
            else:
                entries = self._read(entry[1])
        self._folders[folder] = entries
        return entries

    def _read(self, oid: bytes) -> Folder:
        body = self._journal.trees.get(oid)
        if body is None:
            kind, body = self._repo.odb.read(pygit2.Oid(raw=oid))
            if kind != pygit2.enums.ObjectType.TREE:
                raise _Unexpected(oid.hex())
        return Folder.parse(body)

    def _write(self, changed: set[str]) -> list[tuple[bytes, int, bytes]]:
        """Hash the changed folders' trees, deepest first, each into its parent; the records of
        those that differ. A folder left empty leaves its parent (the index never writes an
        empty tree)."""
        pending = set(changed)
        for folder in changed:
            while folder:
                folder = _split(folder)[0]
                pending.add(folder)
        records: list[tuple[bytes, int, bytes]] = []
        for folder in sorted(pending, key=_depth, reverse=True):
            entries = self._folders[folder]
            body = entries.body()
            oid = object_id(TREE, body)
            if not folder:
                if oid != self._root:
                    records.append((oid, TREE, body))
                self._root = oid
                continue
            parent, name = _split(folder)
            above = self._folders[parent]
            if not entries:
                above.pop(name)
                del self._folders[folder]
            elif above.get(name) != (FOLDER, oid):
                above.put(name, FOLDER, oid)
                records.append((oid, TREE, body))
        return records


def read_blob(root_fd: int, path: str, max_bytes: int, kind: int | None = None) -> Blob | None:
    """The file at `path` (relative to the open folder `root_fd`) as `Index.add(path)` would
    store it: a symlink as its target, a file's bytes with its executable bit. Never follows a
    link on the way (a folder swapped for a link after it was looked at is not read through).
    None for what is not a plain file or link, or past `max_bytes`: the index decides those.
    `kind`: its type as an lstat just found it (`st_mode & S_IFMT`), not asked again; what is
    opened is checked all the same (a link put in its place is refused, a fifo not read)."""
    *folders, name = path.split("/")
    fd = root_fd
    try:
        for folder in folders:
            inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            if fd != root_fd:
                os.close(fd)
            fd = inner
        if kind is None:
            kind = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode & 0o170000
        if kind == LINK:
            target = os.readlink(os.fsencode(name), dir_fd=fd)
            return Blob(object_id(BLOB, target), LINK, target)
        if kind != _REGULAR:  # a fifo, a device, a folder: never opened here
            return None
        # O_NOFOLLOW: a link put in its place since is not read through.
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        try:
            info = os.fstat(file)
            if (info.st_mode & 0o170000) != _REGULAR or info.st_size > max_bytes:
                return None
            data = _read_all(file, info.st_size, max_bytes)
        finally:
            os.close(file)
    except (OSError, UnicodeError):
        return None
    finally:
        if fd != root_fd:
            os.close(fd)
    if data is None:
        return None
    return Blob(object_id(BLOB, data), EXECUTABLE if info.st_mode & 0o100 else FILE, data)


def _read_all(fd: int, size: int, max_bytes: int) -> bytes | None:
    """The file's bytes to its end, `size` as fstat said (one read, if it did not grow since);
    None past `max_bytes`."""
    first = os.read(fd, size + 1)
    if len(first) <= size:  # a short read of a regular file is its end
        return first
    parts: list[bytes] = [first]
    total = len(first)
    while True:
        if total > max_bytes:
            return None
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(parts)
        total += len(part)
        parts.append(part)


def _split(path: str) -> tuple[str, bytes]:
    folder, _, name = path.rpartition("/")
    return folder, os.fsencode(name)


def _depth(folder: str) -> int:
    return folder.count("/") + 1 if folder else 0
