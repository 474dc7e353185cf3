"""Workspace trust, as direnv and VS Code have it: a workspace configures its host only once a
person has trusted exactly what it says (issue 29, item 6).

A workspace can hold files that configure the host run in it: `./overseer.yaml` (rules, servers,
`protect_bootstrap`) and `.overseer/skills/` (an always-on skill goes into every system prompt).
The agent can write them, so they count only while their SHA-256 is the one a person recorded
(`overseer trust`, or the dashboard through POST /api/workspace-trust); new or changed, they are
left out, with a warning naming the file, its hash and how to trust it. What is trusted is kept in
`<data dir>/trusted_workspaces.json` (owner-only, written atomically), keyed by resolved path.

This module is the pure part: hashing what a workspace holds, and the store. Which files of a
folder need trust is said by their readers (backend/config.py, backend/skills/catalog.py) and put
together for people by backend/app/workspace_trust.py.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from backend.domain.models import utcnow
from backend.paths import private_dir, private_opener

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: writes are atomic, only not serialised
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

TRUST_FILE = "trusted_workspaces.json"
"""The store's name in the data dir."""

_WARNED: set[tuple[Path, str]] = set()
"""Versions of untrusted things already warned about in this process."""

TrustKind = Literal["config", "folder"]
"""A config file (one file's content) or a folder of instructions (every file under it)."""


@dataclass(kw_only=True, frozen=True)
class Trustable:
    """A workspace's config file or instruction folder as it is now: what a person would trust."""

    path: Path
    """Resolved."""
    kind: TrustKind
    sha256: str
    files: tuple[str, ...] = ()
    """A folder's files, relative to it, sorted (the hash covers their names and contents)."""
    content: bytes = field(default=b"", repr=False)
    """A config file's content, exactly as hashed: what is shown and loaded is what was trusted."""


class TrustEntry(BaseModel):
    """One thing a person trusted: where, which content, when."""

    path: str
    kind: TrustKind
    sha256: str
    trusted_at: datetime


class _TrustFile(BaseModel):
    """The store on disk."""

    version: Literal[1] = 1
    entries: list[TrustEntry] = []


def digest(content: bytes) -> str:
    """The SHA-256 of `content`, as hex."""
    return hashlib.sha256(content).hexdigest()


def config_file(path: Path) -> Trustable | None:
    """A config file as it is now, read once (its content is what gets parsed); None if there is none."""
    try:
        content = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    return Trustable(path=path.resolve(), kind="config", sha256=digest(content), content=content)


def folder(path: Path) -> Trustable | None:
    """A folder of instructions as it is now, hashed as the sorted set of its files' relative paths
    and contents (symlinks followed, as its readers follow them); None if it holds no file."""
    files = _files_under(path)
    if not files:
        return None
    total = hashlib.sha256()
    for relative, where in files:
        try:
            content_digest = hashlib.sha256(where.read_bytes()).hexdigest()
        except OSError as exc:
            # Unreadable now: hashed as such, so a file that becomes readable needs trust again.
            content_digest = f"unreadable:{exc.errno}"
        total.update(f"{relative}\0{content_digest}\n".encode("utf-8", "surrogateescape"))
    return Trustable(
        path=path.resolve(), kind="folder", sha256=total.hexdigest(), files=tuple(r for r, _ in files)
    )


def _files_under(root: Path) -> list[tuple[str, Path]]:
    """Every file under `root` (relative posix path, path), sorted; a symlink loop is walked once."""
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for current, folders, names in os.walk(root, followlinks=True):
        real = os.path.realpath(current)
        if real in seen:
            folders[:] = []
            continue
        seen.add(real)
        folders.sort()
        for name in names:
            where = Path(current) / name
            found.append((where.relative_to(root).as_posix(), where))
    return sorted(found)


def untrusted_message(item: Trustable, *, known: bool, consequence: str, trust_in: Path) -> str:
    """The warning for something left out: which file, its hash, what that means, how to trust it."""
    what = "changed since a person trusted it" if known else "new"
    return (
        f"{item.path} is not trusted (sha256 {item.sha256}; {what}), so {consequence}. "
        f"Read it, then run `overseer trust` in {trust_in} (or trust it on the dashboard) to use it."
    )


class TrustStore:
    """The trusted config files and folders of workspaces, by resolved path and content hash."""

    def __init__(self, file: Path) -> None:
        self.file = file.expanduser()

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> TrustStore:
        """The store of the host whose data dir this is."""
        return cls(data_dir.expanduser() / TRUST_FILE)

    def entries(self) -> list[TrustEntry]:
        """Everything trusted, by path."""
        return sorted(self._read().entries, key=lambda e: e.path)

    def entry(self, path: Path) -> TrustEntry | None:
        """What was trusted at `path` (resolved), if anything."""
        key = str(path.resolve())
        return next((e for e in self._read().entries if e.path == key), None)

    def is_trusted(self, item: Trustable) -> bool:
        """Whether a person trusted exactly this content at this path."""
        found = self.entry(item.path)
        return found is not None and found.kind == item.kind and found.sha256 == item.sha256

    def trust(self, item: Trustable) -> TrustEntry:
        """Record `item`'s current hash as trusted (replacing what was trusted there before)."""
        entry = TrustEntry(path=str(item.path), kind=item.kind, sha256=item.sha256, trusted_at=utcnow())
        with self._locked():
            kept = [e for e in self._read().entries if e.path != entry.path]
            self._write(_TrustFile(entries=[*kept, entry]))
        return entry

    def revoke(self, path: Path) -> bool:
        """Forget what was trusted at `path`; False when nothing was."""
        key = str(path.resolve())
        with self._locked():
            entries = self._read().entries
            kept = [e for e in entries if e.path != key]
            if len(kept) == len(entries):
                return False
            self._write(_TrustFile(entries=kept))
        return True

    def keep_trust(self, path: Path, *, before: bytes, after: bytes) -> None:
        """A write the host made itself (an "always allow" answer, an admin's change) on a person's
        authority: a config file trusted as it was `before` stays trusted as it is `after`.

        Both are the bytes the host read and wrote, never the file read again, so a change slipped
        in by someone else meanwhile is not trusted by this.
        """
        was = Trustable(path=path.resolve(), kind="config", sha256=digest(before))
        if self.is_trusted(was):
            self.trust(Trustable(path=was.path, kind="config", sha256=digest(after)))

    def warn_once(self, item: Trustable, *, consequence: str, trust_in: Path) -> None:
        """Log why `item` is left out, once per version of it in a process (its readers run on
        every prompt, and settings are read more than once)."""
        version = (item.path, item.sha256)
        if version in _WARNED:
            return
        _WARNED.add(version)
        known = self.entry(item.path) is not None
        log.warning(untrusted_message(item, known=known, consequence=consequence, trust_in=trust_in))

    def _read(self) -> _TrustFile:
        try:
            text = self.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _TrustFile()
        try:
            return _TrustFile.model_validate_json(text)
        except ValidationError:
            # Unreadable: nothing is trusted (fail closed); the next trust writes a good file.
            log.warning("%s is not a trust store Overseer can read; nothing in it counts as trusted", self.file)
            return _TrustFile()

    def _write(self, data: _TrustFile) -> None:
        private_dir(self.file.parent)
        temp = self.file.with_name(f".{self.file.name}.tmp")
        with open(temp, "w", encoding="utf-8", opener=private_opener) as out:
            out.write(json.dumps(data.model_dump(mode="json"), indent=2) + "\n")
        os.chmod(temp, 0o600)  # a leftover temp file from another umask keeps its mode otherwise
        os.replace(temp, self.file)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # `overseer trust` and a serving host may both write: one read-modify-write at a time,
        # so a revoke is never undone by a trust written from what was read before it.
        private_dir(self.file.parent)
        with open(self.file.with_name(f".{self.file.name}.lock"), "a", opener=private_opener) as handle:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
