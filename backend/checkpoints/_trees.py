"""A snapshot's tree written from the last one and the few files that changed.

`Index.write_tree()` rebuilds the trees the index changed and then reads each one back from
disk for its tree cache; `Index.add(path)` looks up `.gitattributes` in three places and
resolves the path's real name, twice, before it hashes the file. For the handful of files a
step changes that is most of a snapshot's cost. Here the blobs are written from the bytes read
(the shadow repository applies no filter: see `_git.py`'s `info/attributes`), and the trees
through builders kept per folder from the last snapshot: only the changed files' folders, and
theirs up to the root, are written, and nothing is read back.

The caller keeps the index in step (`Index.add(IndexEntry)`, `Index.remove`), so the next tree
the index writes itself (a full look) is the one these builders would give. Anything this does
not expect (a name that is a file in one and a folder in the other, a removal of what the tree
does not hold, a name libgit2 cannot take) answers None, and the caller lets the index write the
tree instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pygit2
from pygit2.enums import FileMode

_REGULAR, _LINK = 0o100000, 0o120000

MAX_BUILDERS = 256
"""Folders kept as builders between snapshots; past it they are let go (and read again when used)."""


@dataclass(frozen=True, slots=True)
class Blob:
    """A file's content as stored, and its mode in the tree."""

    id: pygit2.Oid
    mode: FileMode


class _Unexpected(Exception):
    """The tree and the changes do not fit together: the index writes this tree instead."""


class Trees:
    """The last snapshot's tree of one shadow repository, as builders of the folders used."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._root: pygit2.Oid | None = None
        self._builders: dict[str, pygit2.TreeBuilder] = {}

    @property
    def ready(self) -> bool:
        """Whether the last snapshot's tree is known (`apply` can work from it)."""
        return self._root is not None

    def reset(self, tree: pygit2.Oid | None) -> None:
        """The last snapshot is `tree` (written by the index); None: unknown, `apply` declines."""
        self._root = tree
        self._builders.clear()

    def apply(self, removals: list[str], blobs: dict[str, Blob]) -> pygit2.Oid | None:
        """The tree of the last snapshot with `removals` taken out and `blobs` put in (paths
        relative, `/`-separated), written; None when it cannot say (the index writes it then)."""
        if self._root is None:
            return None
        if len(self._builders) > MAX_BUILDERS:
            self._builders.clear()
        try:
            changed: set[str] = set()
            for path in removals:
                folder, name = _split(path)
                builder = self._builder(folder, make=False)
                if builder is None or builder.get(name) is None:
                    raise _Unexpected(path)
                builder.remove(name)
                changed.add(folder)
            for path, blob in blobs.items():
                folder, name = _split(path)
                builder = self._builder(folder, make=True)
                assert builder is not None
                present = builder.get(name)
                if present is not None and present.filemode == FileMode.TREE:
                    raise _Unexpected(path)
                builder.insert(name, blob.id, blob.mode)
                changed.add(folder)
            root = self._write(changed)
        except (_Unexpected, pygit2.GitError, KeyError, ValueError, UnicodeError):
            self.reset(None)  # builders may hold half the change
            return None
        self._root = root
        return root

    def _builder(self, folder: str, *, make: bool) -> pygit2.TreeBuilder | None:
        """The builder of `folder` ("" for the root); a missing folder is made empty with `make`,
        else None."""
        builder = self._builders.get(folder)
        if builder is not None:
            return builder
        if not folder:
            assert self._root is not None
            builder = self._repo.TreeBuilder(self._repo[self._root])
        else:
            parent, name = _split(folder)
            above = self._builder(parent, make=make)
            if above is None:
                return None
            entry = above.get(name)
            if entry is None:
                if not make:
                    return None
                builder = self._repo.TreeBuilder()
            elif entry.filemode != FileMode.TREE:
                raise _Unexpected(folder)
            else:
                builder = self._repo.TreeBuilder(self._repo[entry.id])
        self._builders[folder] = builder
        return builder

    def _write(self, changed: set[str]) -> pygit2.Oid:
        """Write the changed folders' trees, deepest first, each into its parent; the root's id.
        A folder left empty leaves its parent (the index never writes an empty tree)."""
        pending = set(changed)
        for folder in list(changed):
            while folder:
                folder = _split(folder)[0]
                pending.add(folder)
        for folder in sorted(pending, key=lambda f: f.count("/") + (1 if f else 0), reverse=True):
            if not folder:
                continue
            builder = self._builders[folder]
            parent, name = _split(folder)
            above = self._builders[parent]
            if len(builder):
                above.insert(name, builder.write(), FileMode.TREE)
            else:
                if above.get(name) is not None:
                    above.remove(name)
                del self._builders[folder]
        root = self._builders.get("")
        if root is None:  # nothing changed
            assert self._root is not None
            return self._root
        return root.write()


def read_blob(repo: pygit2.Repository, root_fd: int, path: str, max_bytes: int) -> Blob | None:
    """Store the file at `path` (relative to the open folder `root_fd`) as a blob, as
    `Index.add(path)` would: a symlink as its target, a file's bytes with its executable bit.
    Never follows a link on the way (a folder swapped for a link after it was looked at is not
    read through). None for what is not a plain file or link, or past `max_bytes`: the index
    decides those itself."""
    *folders, name = path.split("/")
    fd = root_fd
    try:
        for folder in folders:
            inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            if fd != root_fd:
                os.close(fd)
            fd = inner
        kind = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode & 0o170000
        if kind == _LINK:
            return Blob(repo.create_blob(os.readlink(os.fsencode(name), dir_fd=fd)), FileMode.LINK)
        if kind != _REGULAR:  # a fifo, a device, a folder: never opened here
            return None
        # O_NOFOLLOW: a link put in its place since is not read through.
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        try:
            info = os.fstat(file)
            if (info.st_mode & 0o170000) != _REGULAR or info.st_size > max_bytes:
                return None
            data = _read_all(file, max_bytes)
        finally:
            os.close(file)
    except (OSError, UnicodeError):
        return None
    finally:
        if fd != root_fd:
            os.close(fd)
    if data is None:
        return None
    return Blob(repo.create_blob(data), FileMode.BLOB_EXECUTABLE if info.st_mode & 0o100 else FileMode.BLOB)


def _read_all(fd: int, max_bytes: int) -> bytes | None:
    """The file's bytes to its end; None past `max_bytes` (it grew since it was looked at)."""
    parts: list[bytes] = []
    total = 0
    while True:
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(parts)
        total += len(part)
        if total > max_bytes:
            return None
        parts.append(part)


def _split(path: str) -> tuple[str, str]:
    folder, _, name = path.rpartition("/")
    return folder, name
