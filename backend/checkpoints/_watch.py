"""Which files of a workspace changed since the last snapshot, from the kernel (inotify).

A snapshot must find what changed. Asking git's stat cache means an lstat of every file and a
read of every folder: ~0.1 ms on a small workspace, 20-50 ms on 10,000 files, whoever changed
them. The kernel already knows: an inotify watch on each folder reports every file created,
written, deleted, moved or chmod-ed in it, by any process of this machine (the sandbox's bind
mounts included: inotify watches inodes, not paths), so a snapshot can look at just those files.

It is only ever a shortcut. `changed()` answers None — "look at everything" — whenever it cannot
vouch for a complete list: the first time, when the kernel's queue overflowed, when a folder was
made, removed or moved (its files need the full walk, and new folders a watch), when an ignore
file changed, when a watch could not be added (the per-user limit), on filesystems where another
machine may write (NFS, SMB, FUSE: their changes raise no event here), and at least every
`FULL_EVERY_S` seconds. The last one is a bound, not a proof: a process writing through a
shared memory map after closing the file raises no event (inotify's own limit), and such a
change is seen by the next full look.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import threading
from collections import OrderedDict
import time
import weakref
from collections.abc import Callable
from pathlib import Path

FULL_EVERY_S = 60.0
"""A snapshot looks at every file at least this often, whatever the kernel said."""

MAX_FOLDERS = 20_000
"""Past this many folders, no watch: every snapshot looks at everything (as without inotify)."""

MAX_WATCHES = 16
"""Workspaces watched at once by this process; the least recently used gives its watch up past
it. inotify's limits are per user (128 instances, and the watches of `max_user_watches`): an
editor or a build tool of the same person needs its share."""

SHARE_OF_USER_WATCHES = 4
"""This process takes at most a quarter of the user's folder watches, in all workspaces."""

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_UNMOUNT, _IN_Q_OVERFLOW, _IN_IGNORED = 0x2000, 0x4000, 0x8000
_IN_ONLYDIR, _IN_DONT_FOLLOW, _IN_EXCL_UNLINK, _IN_ISDIR = 0x01000000, 0x02000000, 0x04000000, 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_WANTED = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
    | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK
)
_LOOK_AT_ALL = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_Q_OVERFLOW | _IN_IGNORED
_FULL_LOOK = _LOOK_AT_ALL | _IN_ISDIR
_EVENT = struct.Struct("iIII")
_MAX_EVENT = _EVENT.size + 256  # NAME_MAX and its padding
_READ_BYTES = 64 * 1024
_LOOK_AGAIN_NAMES = frozenset({".gitignore", ".git"})
"""A change to one of these may change what every other file counts as (ignored, nested)."""

# Filesystems another machine can write to (their writes raise no event here): statfs f_type.
_REMOTE_FILESYSTEMS = frozenset(
    {
        0x6969,  # NFS
        0xFF534D42,  # CIFS
        0xFE534D42,  # SMB2
        0x517B,  # SMB
        0x65735546,  # FUSE
        0x00C36400,  # CEPH
        0x47504653,  # GPFS
        0x5346414F,  # AFS
        0x6B414653,  # kAFS
        0x564C,  # NCP
        0x73757245,  # CODA
        0x013111A8,  # IBRIX
        0x0BD00BD0,  # Lustre
        0x19830326,  # FhGFS / BeeGFS
    }
)


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.statfs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        return libc
    except (OSError, AttributeError):  # not Linux, or no inotify
        return None


_LIBC = _libc()


def is_remote(folder: Path) -> bool:
    """Whether another machine may write the folder's filesystem (or it cannot be told)."""
    if _LIBC is None:
        return True
    buffer = ctypes.create_string_buffer(256)  # struct statfs: f_type is its first word
    if _LIBC.statfs(os.fsencode(folder), buffer) != 0:
        return True
    f_type = ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF
    return f_type in _REMOTE_FILESYSTEMS


def _user_watch_limit() -> int:
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return 8192  # the kernel's old default


class _Watches:
    """Every live watch of the process, least recently used first, and the folders they hold."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._live: OrderedDict[WorkspaceWatch, int] = OrderedDict()
        self.budget = max(1024, _user_watch_limit() // SHARE_OF_USER_WATCHES)

    def used(self, watch: WorkspaceWatch) -> None:
        with self._lock:
            if watch in self._live:
                self._live.move_to_end(watch)

    def admit(self, watch: WorkspaceWatch) -> None:
        """Make room for one more watch (closing the least recently used ones past MAX_WATCHES)."""
        with self._lock:
            self._live[watch] = 0
            self._live.move_to_end(watch)
            while len(self._live) > MAX_WATCHES and self._evict(watch):
                pass

    def claim(self, watch: WorkspaceWatch) -> bool:
        """One more folder for `watch`, if the budget allows (evicting others if need be)."""
        with self._lock:
            while sum(self._live.values()) >= self.budget:
                if not self._evict(watch):
                    return False
            self._live[watch] = self._live.get(watch, 0) + 1
            return True

    def release(self, watch: WorkspaceWatch) -> None:
        with self._lock:
            self._live.pop(watch, None)

    def _evict(self, keep: WorkspaceWatch) -> bool:
        """Close the least recently used watch that is not `keep` nor in use; False when none is."""
        for victim in list(self._live):
            if victim is keep or not victim.lock.acquire(blocking=False):
                continue
            try:
                victim.close()  # its next look is a full one, watching again
            finally:
                victim.lock.release()
            return True
        return False


class WorkspaceWatch:
    """The files changed under a workspace since the last `changed()`; None when it cannot say.

    Its owner (the Stager, under the shadow repository's lock) calls it; `lock` keeps another
    workspace's watch from closing it mid-look to make room (see `_Watches`)."""

    def __init__(
        self, workspace: Path, *, skip: Callable[[str], bool], clock: Callable[[], float] = time.monotonic
    ) -> None:
        """`skip(relative_folder)`: folders not to watch (ignored ones, nested repositories);
        their files never reach a snapshot, so their changes do not matter."""
        self.workspace = workspace
        self._skip = skip
        self._clock = clock
        self._fd: int | None = None
        self._folders: dict[int, str] = {}  # watch descriptor -> folder, relative ("" for the root)
        self._full_at = 0.0
        self.usable = _LIBC is not None and not is_remote(workspace)
        self.lock = threading.Lock()
        self._pending: set[str] = set()  # read from the kernel by `peek`, not yet taken
        self._must_look = False  # `peek` read that the next look must be a full one

    def changed(self) -> set[str] | None:
        """The workspace-relative paths of files changed since the last call, or None: look at
        everything (the watches are set up again first, so what changes meanwhile is not lost)."""
        if not self.usable:
            return None
        with self.lock:
            pending, self._pending = self._pending, set()
            if self._fd is None or self._must_look or self._clock() - self._full_at > FULL_EVERY_S:
                return self._restart()
            WATCHES.used(self)
            paths = self._drain()
            return self._restart() if paths is None else pending | paths

    def peek(self) -> set[str] | None:
        """What `changed()` would answer now, without taking it: what it reads from the kernel is
        kept for the next `changed()`. None when that would be a full look."""
        if not self.usable:
            return None
        with self.lock:
            if self._fd is None or self._must_look or self._clock() - self._full_at > FULL_EVERY_S:
                return None
            paths = self._drain()
            if paths is None:
                self._must_look = True
                return None
            self._pending |= paths
            return set(self._pending)

    def take_peeked(self) -> None:
        """What `peek` answered is being looked at now: `changed()` will not answer it again."""
        with self.lock:
            self._pending = set()

    @property
    def watching(self) -> bool:
        return self._fd is not None

    def close(self) -> None:
        """Give the watch up (its kernel resources too); the next look is a full one."""
        if self._fd is not None:
            self._closer.detach()
            os.close(self._fd)
            self._fd = None
            self._folders.clear()
        WATCHES.release(self)

    def _restart(self) -> None:  # returns None: the caller's answer
        self.close()
        self._pending, self._must_look = set(), False
        self._full_at = self._clock()
        try:
            self._watch_all()
        except OSError:
            self.close()  # past the per-user limit, say: every look a full one, until next time
        return None

    def _watch_all(self) -> None:
        assert _LIBC is not None
        WATCHES.admit(self)
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._fd = fd
        self._closer = weakref.finalize(self, _close_quietly, fd)  # a Stager dropped without close()
        pending = [""]
        while pending:
            relative = pending.pop()
            full = os.path.join(self.workspace, relative) if relative else str(self.workspace)
            if not WATCHES.claim(self):
                raise OSError(errno.ENOSPC, "this process's share of the user's inotify watches is taken")
            wd = _LIBC.inotify_add_watch(fd, os.fsencode(full), _WANTED)
            if wd < 0:
                code = ctypes.get_errno()
                if code in (errno.ENOENT, errno.ENOTDIR) and relative:
                    continue  # removed while we walked: its parent's event makes the next look full
                raise OSError(code, f"inotify_add_watch {full}")
            self._folders[wd] = relative
            if len(self._folders) > MAX_FOLDERS:
                raise OSError(errno.ENOSPC, "too many folders to watch")
            try:
                entries = os.scandir(full)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with entries:
                for entry in entries:
                    if entry.name == ".git" or not entry.is_dir(follow_symlinks=False):
                        continue
                    child = f"{relative}/{entry.name}" if relative else entry.name
                    if not self._skip(child):
                        pending.append(child)

    def _drain(self) -> set[str] | None:
        """The paths of the events queued now (None: a full look is due). Runs before every
        snapshot, so each event costs as little as it can: names are decoded once per file, and
        a read that came back short emptied the queue (no last read to fail)."""
        assert self._fd is not None
        names: set[tuple[int, bytes]] = set()
        unpack, header = _EVENT.unpack_from, _EVENT.size
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                break
            offset, end = 0, len(data)
            while offset < end:
                wd, mask, _cookie, length = unpack(data, offset)
                start, offset = offset + header, offset + header + length
                if mask & _FULL_LOOK:
                    return None  # a folder came, went or moved (or the queue overflowed)
                names.add((wd, data[start:offset]))
            if end <= _READ_BYTES - _MAX_EVENT:
                break  # it would have held another event: the queue is empty
        paths: set[str] = set()
        for wd, raw in names:
            folder = self._folders.get(wd)
            if folder is None:
                return None
            name = os.fsdecode(raw.rstrip(b"\0"))
            if name in _LOOK_AGAIN_NAMES:
                return None
            paths.add(f"{folder}/{name}" if folder else name)
        return paths


WATCHES = _Watches()


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
