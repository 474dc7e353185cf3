"""Opening a checked path inside a trusted folder without leaving it, even while names change.

A path is first resolved and confined (workspace.py), then used. In between, another process may
swap a folder on the way for a symlink: an attack let 7 of 147 gated writes land outside the
workspace that way (issue 13, item 4). So the confined path is opened again, component by
component, from a descriptor of its base folder, each step with O_NOFOLLOW. The resolved path
holds no symlinks, so meeting one on the way means a name changed meanwhile: the call is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading must not wait for a writer (it is refused after fstat).
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True)
class Anchored:
    """A path as a trusted base folder and the names leading from it (no `..`, no symlinks)."""

    base: Path
    parts: tuple[str, ...]
    shown: str
    """The path as the caller wrote it, for messages."""

    @classmethod
    def within(cls, bases: Path | Sequence[Path], resolved: Path, shown: str) -> Anchored:
        """`resolved` (already confined) below the first of `bases` that holds it."""
        for base in [bases] if isinstance(bases, Path) else bases:
            if resolved.is_relative_to(base):
                return cls(base, resolved.relative_to(base).parts, shown)
        raise ToolError(f"path '{shown}' is outside the folders it may reach")

    @property
    def path(self) -> Path:
        return self.base.joinpath(*self.parts)

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else "."

    def child(self, *names: str) -> Anchored:
        return Anchored(self.base, (*self.parts, *names), self.shown)


@contextlib.contextmanager
def opened_parent(target: Anchored, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder holding `target` (its last name is `target.name`)."""
    if not target.parts:
        raise ToolError(f"'{target.shown}' is the workspace folder itself; give a file path")
    fd = _walk(target, target.parts[:-1], create=create)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def opened_file(target: Anchored) -> Iterator[tuple[int, os.stat_result]]:
    """`target` opened for reading, with its status; a symlink is never followed."""
    if not target.parts:
        fd = os.open(target.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        with opened_parent(target) as parent:
            fd = open_at(parent, target.name, target)
    try:
        yield fd, os.fstat(fd)
    finally:
        os.close(fd)


def open_at(parent: int, name: str, target: Anchored) -> int:
    """Open `name` in the folder `parent` for reading, refusing a symlink; blocking mode restored."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        raise ToolError(f"file '{target.shown}' does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _swapped(target, name) from None
        raise
    os.set_blocking(fd, True)
    return fd


def stat_at(parent: int, name: str) -> os.stat_result | None:
    """The status of `name` in `parent` (a symlink's own), or None when it does not exist."""
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def is_symlink(st: os.stat_result | None) -> bool:
    return st is not None and stat.S_ISLNK(st.st_mode)


def _walk(target: Anchored, names: Sequence[str], *, create: bool) -> int:
    fd = os.open(target.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for name in names:
        fd = _step(fd, name, target, create=create)  # closes the fd it is given, whatever happens
    return fd


def _step(fd: int, name: str, target: Anchored, *, create: bool) -> int:
    """Descend from `fd` into the folder `name`, closing `fd`; never through a symlink."""
    try:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise ToolError(f"'{target.shown}' does not exist (no folder '{name}' on the way)") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            # Linux says ENOTDIR, not ELOOP, for a symlink opened with O_DIRECTORY | O_NOFOLLOW.
            if exc.errno == errno.ELOOP or is_symlink(stat_at(fd, name)):
                raise _swapped(target, name) from None
            if exc.errno == errno.ENOTDIR:
                raise ToolError(f"'{target.shown}': '{name}' on the way is not a folder") from None
            raise
    finally:
        os.close(fd)


def _swapped(target: Anchored, name: str) -> ToolError:
    return ToolError(
        f"'{target.shown}' changed while it was being opened: '{name}' is now a symlink, and it is "
        "not followed (it could lead outside the workspace); check the path and try again"
    )
