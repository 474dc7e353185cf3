"""Writing a shadow repository's files back into the workspace, each one atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

from backend.checkpoints._git import JOURNAL, Git, temporary_path
from backend.checkpoints._tree_diff import EntryChange

_SYMLINK = "120000"
_EXECUTABLE = "100755"


class RestoreError(RuntimeError):
    """A file could not be put back (say, a folder the snapshot does not know stands in its place)."""


def restore_files(git: Git, entries: list[EntryChange]) -> list[str]:
    """Apply `entries` (from the workspace's tree now to the wanted one): remove what the wanted
    tree lacks, write what differs. Every file is either as before or as wanted at any moment:
    a file is written beside its target and renamed over it. Returns the paths touched, sorted."""
    work = git.work_tree
    removals = sorted((e.path for e in entries if e.status == "D"), reverse=True)
    writes = [e for e in entries if e.status != "D"]
    journal = git.git_dir / JOURNAL
    if writes:
        # Before any temporary file exists: what to clear if this process is killed.
        journal.write_bytes(b"\0".join([os.fsencode(work), *(os.fsencode(e.path) for e in writes)]))
    for path in removals:
        (work / path).unlink(missing_ok=True)
    for path in removals:
        _remove_empty_parents(work, work / path)
    if writes:
        reader = git.popen("cat-file", "--batch")
        try:
            for entry in writes:
                _write(work, entry, reader)
        finally:
            assert reader.stdin is not None
            reader.stdin.close()
            reader.wait()
        journal.unlink()
    return sorted([*removals, *(e.path for e in writes)])


def _remove_empty_parents(work: Path, path: Path) -> None:
    folder = path.parent
    while folder != work:
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): it stays
            return
        folder = folder.parent


def _write(work: Path, entry: EntryChange, reader: subprocess.Popen[bytes]) -> None:
    target = work / entry.path
    previous = _lstat(target)
    same_bytes = entry.old_id == entry.new_id and entry.new_mode != _SYMLINK
    if same_bytes and previous and _regular(previous.st_mode):
        os.chmod(target, _permissions(previous.st_mode & 0o777, entry.new_mode))  # the executable bit alone
        return
    data = _blob(reader, entry.new_id)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise RestoreError(
            f"cannot restore {entry.path}: a file the checkpoint left out stands where its folder goes"
        ) from None
    if previous and stat.S_ISDIR(previous.st_mode):
        with contextlib.suppress(OSError):  # an empty folder gives way; one with files cannot
            target.rmdir()
    temporary = temporary_path(work, entry.path)
    temporary.unlink(missing_ok=True)
    if entry.new_mode == _SYMLINK:
        os.symlink(os.fsdecode(data), temporary)
    else:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        try:
            _write_all(descriptor, data)
            kept = previous if previous and _regular(previous.st_mode) else os.fstat(descriptor)
            base = kept.st_mode & 0o777
            os.fchmod(descriptor, _permissions(base, entry.new_mode))
        finally:
            os.close(descriptor)
    try:
        os.replace(temporary, target)
    except IsADirectoryError:
        temporary.unlink(missing_ok=True)
        raise RestoreError(
            f"cannot restore {entry.path}: a folder with files the checkpoint left out stands in its place"
        ) from None


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _permissions(base: int, mode: str) -> int:
    """`base` with the executable bit as git's mode says (exec wherever read, like git's checkout)."""
    if mode == _EXECUTABLE:
        return base | ((base & 0o444) >> 2)
    return base & ~0o111


def _blob(reader: subprocess.Popen[bytes], blob_id: str) -> bytes:
    assert reader.stdin is not None and reader.stdout is not None
    reader.stdin.write(blob_id.encode() + b"\n")
    reader.stdin.flush()
    header = reader.stdout.readline().split()
    if len(header) != 3 or header[1] != b"blob":
        raise RestoreError(f"the shadow repository lacks object {blob_id}")
    size = int(header[2])
    data = reader.stdout.read(size)
    reader.stdout.read(1)  # the newline after each object
    return data


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _regular(mode: int) -> bool:
    return (mode & 0o170000) == 0o100000
