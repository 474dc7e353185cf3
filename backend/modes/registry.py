"""The ModeRegistry: built-in mode files and a person's own, read afresh on every call.

A person's file (`<data_dir>/modes/<name>.md`) replaces the built-in of the same name until it
is deleted. Files are tiny and may be edited by hand, so nothing is cached: an edit counts on
the next call, with no restart. A file that cannot be used never hides the others.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from backend.modes.model import (
    InvalidMode,
    Mode,
    ModeWrite,
    UnknownMode,
    build_mode,
    check_name,
    parse_mode_file,
    render_mode_file,
)

log = logging.getLogger(__name__)

BUILTIN_ORDER = ("agent", "ask", "plan", "research", "review")
SUFFIX = ".md"


class ModeRegistry:
    """Lists, reads, saves and deletes modes; a person's files win over the built-ins."""

    def __init__(self, builtin_dir: Path, user_dir: Path) -> None:
        """`builtin_dir` ships with Overseer and is only read; `user_dir` is created on the first save."""
        self.builtin_dir = builtin_dir
        self.user_dir = user_dir
        self._warned: set[tuple[Path, int]] = set()

    def list(self) -> list[Mode]:
        """Every usable mode: the built-ins in their fixed order, then the rest by name.

        A file that cannot be parsed is left out (with a warning, once per version of the file);
        an override that cannot be parsed leaves its name out too rather than fall back quietly
        to the built-in, since `get` of that name reports the fault.
        """
        builtin, user = _files(self.builtin_dir), _files(self.user_dir)
        modes = []
        for name in _ordered(builtin.keys() | user.keys()):
            try:
                modes.append(self._load(name, builtin, user))
            except InvalidMode as exc:
                self._warn_once(user.get(name) or builtin[name], exc)
        return modes

    def get(self, name: str) -> Mode:
        """The mode in effect under `name`: UnknownMode if none, InvalidMode if its file is broken."""
        builtin, user = _files(self.builtin_dir), _files(self.user_dir)
        if name not in builtin and name not in user:
            raise UnknownMode(name, _ordered(builtin.keys() | user.keys()))
        return self._load(name, builtin, user)

    def builtin(self, name: str) -> Mode | None:
        """The shipped version of `name` (for "reset to built-in" and diffs), or None."""
        path = _files(self.builtin_dir).get(name)
        return None if path is None else parse_mode_file(path, source="builtin")

    def save(self, name: str, body: ModeWrite) -> Mode:
        """Create or replace a person's mode file, after checking every field.

        InvalidMode (a BadRequest) names the field at fault: the name, a tool pattern, a policy,
        or a `next_mode` that names no mode.
        """
        check_name(name)
        builtin, user = _files(self.builtin_dir), _files(self.user_dir)
        mode = build_mode(name, body.model_dump(), source="user", overrides_builtin=name in builtin)
        known = builtin.keys() | user.keys() | {name}
        if mode.next_mode is not None and mode.next_mode not in known:
            raise InvalidMode(
                f"next_mode: there is no mode {mode.next_mode!r}; modes: {', '.join(_ordered(known))}"
            )
        self.user_dir.mkdir(parents=True, exist_ok=True)
        _write_atomically(self.user_dir / f"{name}{SUFFIX}", render_mode_file(mode))
        log.info("mode %r saved to %s", name, self.user_dir)
        return self.get(name)

    def delete(self, name: str) -> Mode | None:
        """Remove a person's mode file.

        Returns None when the mode was theirs alone, or the built-in now in effect when their
        file overrode one (a reset). A built-in with no override cannot be deleted (InvalidMode);
        a name with no mode raises UnknownMode.
        """
        builtin, user = _files(self.builtin_dir), _files(self.user_dir)
        if name in user:
            user[name].unlink(missing_ok=True)
            log.info("mode %r deleted from %s", name, self.user_dir)
            return self.builtin(name) if name in builtin else None
        if name in builtin:
            raise InvalidMode(
                f"built-in mode {name!r} cannot be deleted; save a mode under its name to change it, "
                "or one under another name to add your own"
            )
        raise UnknownMode(name, _ordered(builtin.keys() | user.keys()))

    def _load(self, name: str, builtin: dict[str, Path], user: dict[str, Path]) -> Mode:
        if name in user:
            return parse_mode_file(user[name], source="user", overrides_builtin=name in builtin)
        return parse_mode_file(builtin[name], source="builtin")

    def _warn_once(self, path: Path, exc: InvalidMode) -> None:
        try:
            version = (path, path.stat().st_mtime_ns)
        except OSError:
            version = (path, 0)
        if version not in self._warned:
            self._warned.add(version)
            log.warning("mode file skipped: %s", exc)


def _files(folder: Path) -> dict[str, Path]:
    """`{name: path}` for the `*.md` files directly in `folder` (none if it does not exist).

    Hidden files (editor swap files) are ignored; a file whose name is not a valid mode name is
    kept, so that reading it reports why it cannot be used.
    """
    try:
        entries = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return {}
    return {
        path.stem: path
        for path in entries
        if path.suffix == SUFFIX and not path.name.startswith(".") and path.is_file()
    }


def _ordered(names: Iterable[str]) -> list[str]:
    """Built-in names in their fixed order, then every other name alphabetically."""
    rank = {name: index for index, name in enumerate(BUILTIN_ORDER)}
    return sorted(names, key=lambda name: (rank.get(name, len(rank)), name))


def _write_atomically(path: Path, text: str) -> None:
    """Write beside `path`, then rename: a reader never sees half a file."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
