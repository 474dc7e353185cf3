"""Where a call may touch files: the workspace root and confinement of paths inside it.

The root comes from `--root`, or, only when the host launched the server
(`OVERSEER_MANAGED=1`), from the call's `_meta["overseer/workspace"]`. Every
user-supplied path is resolved (symlinks included) and refused unless the
result stays inside the resolved root, or, for tools that only read, inside
one of the server's read roots (folders such as the skill folders, readable
from any workspace and never writable). The confined path is then opened
again name by name from its base folder, never through a symlink (anchored.py),
so a folder swapped for a link after the check leads nowhere.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from shared.home import TildeError, expand_home

WORKSPACE_META_KEY = "overseer/workspace"
SESSION_META_KEY = "overseer/session_id"


def workspace_root(default_root: Path, meta: Mapping[str, Any] | None, *, trust_meta: bool) -> Path:
    """The resolved workspace root for one call; refuses a root that is not an existing directory.

    `meta` overrides `default_root` only when `trust_meta` is set: a standalone
    server must not let a client point it at another folder.
    """
    root: Path = default_root
    if trust_meta and meta and meta.get(WORKSPACE_META_KEY) is not None:
        raw = meta[WORKSPACE_META_KEY]
        if not isinstance(raw, str) or "\x00" in raw or not os.path.isabs(raw):
            raise ToolError(f"_meta {WORKSPACE_META_KEY!r} must be an absolute path, got {raw!r}")
        root = Path(raw)
    resolved = _resolve(root, shown=str(root))
    if not resolved.is_dir():
        raise ToolError(f"workspace {root} does not exist or is not a directory")
    return resolved


def confine(root: Path, user_path: str) -> Path:
    """Resolve `user_path` against the resolved `root`, refusing any result outside it.

    Relative paths are joined to the root; absolute paths are accepted only when
    they resolve inside it. A leading `~` is expanded (that is what a model means
    by it), so `~/.ssh/id_rsa` is judged by where it really points.
    """
    resolved = _resolve_user_path(root, user_path)
    if not resolved.is_relative_to(root):
        raise ToolError(f"path '{user_path}' is outside the workspace {root}")
    return resolved


def confine_readable(root: Path, read_roots: Sequence[Path], user_path: str) -> Path:
    """Like `confine`, but a path resolving inside one of `read_roots` is accepted too.

    For tools that only read. Relative paths are still joined to the workspace root; a read
    root is reached by an absolute (or `~`) path, or a workspace symlink that resolves into it.
    Symlinks and `..` are resolved first, so nothing escapes a read root either.
    """
    resolved = _resolve_user_path(root, user_path)
    if resolved.is_relative_to(root) or read_root_of(read_roots, resolved) is not None:
        return resolved
    if not read_roots:
        raise ToolError(f"path '{user_path}' is outside the workspace {root}")
    shown = ", ".join(str(r) for r in read_roots)
    raise ToolError(f"path '{user_path}' is outside the workspace {root} and the read-only folders ({shown})")


def confine_writable(root: Path, read_roots: Sequence[Path], user_path: str) -> Path:
    """`confine`, with a refusal that says read roots are read-only when the path is in one."""
    resolved = _resolve_user_path(root, user_path)
    if resolved.is_relative_to(root):
        return resolved
    if read_root_of(read_roots, resolved) is not None:
        raise ToolError(
            f"path '{user_path}' is outside the workspace {root}: "
            "it may be read, but read roots are read-only"
        )
    raise ToolError(f"path '{user_path}' is outside the workspace {root}")


def read_root_of(read_roots: Sequence[Path], resolved: Path) -> Path | None:
    """The read root (resolved) that the already-resolved `resolved` lies in, or None."""
    for read_root in read_roots:
        try:
            real_root = read_root.expanduser().resolve(strict=False)
        except (OSError, RuntimeError):
            continue
        if resolved.is_relative_to(real_root):
            return real_root
    return None


def display_path(root: Path, path: Path) -> str:
    """`path` relative to the workspace root, as the model should write it back ("." for the root).

    Line breaks in a name are shown escaped: results are one path (or hit) a line, and a name
    that started a new line could pass a hidden file's line off as another file's.
    """
    try:
        shown = path.relative_to(root).as_posix() or "."
    except ValueError:
        shown = str(path)
    return one_line(shown)


def one_line(name: str) -> str:
    """A file name with its line breaks escaped, so it fills exactly one line of a result."""
    return name.replace("\n", "\\n").replace("\r", "\\r")


def _resolve_user_path(root: Path, user_path: str) -> Path:
    """`user_path` (NUL refused, `~` expanded) joined to `root` and resolved, symlinks included."""
    if "\x00" in user_path:
        raise ToolError(f"path {user_path!r} contains a NUL byte")
    try:
        raw = expand_home(user_path or ".")
    except TildeError as exc:
        raise ToolError(str(exc)) from None
    return _resolve(root / raw, shown=user_path)


def _resolve(path: Path, *, shown: str) -> Path:
    try:
        return path.resolve(strict=False)
    except RuntimeError as exc:  # a symlink loop (Python 3.11 raises RuntimeError)
        raise ToolError(f"path '{shown}' cannot be resolved: {exc}") from exc
    except OSError as exc:
        raise ToolError(f"path '{shown}' cannot be resolved: {exc.strerror or exc}") from exc


def extra_links(st: os.stat_result) -> int:
    """How many other names a regular file has (hard links); 0 for anything else.

    A hard link planted in the workspace is another name for a file that may lie outside it,
    and no path check can see that: such files are neither read nor written in place.
    """
    return st.st_nlink - 1 if stat.S_ISREG(st.st_mode) else 0


def refuse_hard_links(st: os.stat_result, shown: str) -> None:
    """Refuse to read a file that has other names: one of them may be outside the workspace."""
    others = extra_links(st)
    if others:
        raise ToolError(
            f"'{shown}' has {others + 1} hard links: another name for it may lie outside the workspace, "
            "so it is not read here; copy it into the workspace (cp makes a new file) to work on it"
        )


def replace_at(parent: int, name: str, data: bytes) -> None:
    """Write `data` as `name` in the folder `parent`: a new file renamed into place beside it.

    Never through the old file: a hard link or a file swapped in meanwhile is replaced, not
    written through. The old file's permission bits are kept.
    """
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK  # as a plain open() would have created it
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temp = f".overseer-{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temp, flags, 0o600, dir_fd=parent)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            os.fchmod(out.fileno(), mode)
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=parent)
        raise


def _read_umask() -> int:
    # Read once, at import: setting and restoring it later would race with other threads' files.
    current = os.umask(0o077)
    os.umask(current)
    return current


_UMASK = _read_umask()
