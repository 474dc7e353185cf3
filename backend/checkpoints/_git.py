"""Running git on a shadow repository: its own GIT_DIR and index, no user or system config, no hooks.

Every command runs with a fixed environment (inherited `GIT_*` variables dropped, so a host
started from inside a git hook cannot point us at the user's repository) and `-c` options that
make a snapshot byte for byte: no line-ending or filter conversion, modes and symlinks kept.
`ShadowLock` serialises the operations on one shadow repository between threads and processes
and clears what a killed process left behind (git's `*.lock` files, half-written restore files).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from backend.checkpoints._journal import pack_journal

AUTHOR = ("Overseer", "overseer@localhost")

# What a snapshot always leaves out (git itself never enters a folder named `.git`).
BUILT_IN_IGNORED = ("node_modules", ".venv", "__pycache__")

TEMP_SUFFIX = ".overseer-tmp"
"""Suffix of a file a restore is writing; renamed over its target when complete."""

LOCK_HELD_WAIT_S = 30.0
"""How long a git lock file held open by a running process is waited for before giving up."""

JOURNAL = "restore-journal"
"""In the shadow repository: the temporary files a restore may leave if it is killed."""

# Inside the shadow repository. `info/attributes` outranks every `.gitattributes` of the
# workspace, so no eol, filter or encoding rule of the user's can change the bytes we keep.
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol !diff\n"
_EXCLUDE = "".join(f"{name}/\n" for name in BUILT_IN_IGNORED) + f"*{TEMP_SUFFIX}\n"
CONFIG = {
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.fileMode": "true",
    "core.symlinks": "true",
    "core.ignoreCase": "false",
    "core.logAllRefUpdates": "false",
}
"""What both git and libgit2 must see (`backend/checkpoints/_stage.py` writes it into the config)."""
_OPTIONS = (
    *(f"{key}={value}" for key, value in CONFIG.items()),
    "core.hooksPath=/dev/null",
    "core.quotePath=false",
    "core.fsmonitor=false",
    "safe.directory=*",
    "gc.auto=0",
    "commit.gpgSign=false",
    "status.showUntrackedFiles=all",
    "status.renames=false",
    "diff.renames=false",
    "diff.external=",
    "submodule.recurse=false",
    "advice.addEmbeddedRepo=false",
)


class GitError(RuntimeError):
    """A git command of the shadow repository failed; the message holds its stderr."""


class Git:
    """git bound to one shadow repository (`git_dir`, its own index) and one work tree."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(git_dir),
            GIT_WORK_TREE=str(work_tree),
            GIT_INDEX_FILE=str(git_dir / "index"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL="/dev/null",
            GIT_TERMINAL_PROMPT="0",
            GIT_AUTHOR_NAME=AUTHOR[0],
            GIT_AUTHOR_EMAIL=AUTHOR[1],
            GIT_COMMITTER_NAME=AUTHOR[0],
            GIT_COMMITTER_EMAIL=AUTHOR[1],
            LC_ALL="C",
        )
        self.env = env
        options = list(_OPTIONS)
        # The user's own `.git/info/exclude` counts like their `.gitignore` (read, never written).
        user_exclude = work_tree / ".git" / "info" / "exclude"
        if user_exclude.is_file():
            options.append(f"core.excludesFile={user_exclude}")
        self._prefix = ["git"] + [arg for option in options for arg in ("-c", option)]

    def run(self, *args: str, stdin: bytes | None = None, ok: Sequence[int] = (0,)) -> bytes:
        """Run `git args...` in the work tree; its stdout (GitError on an unexpected exit code)."""
        done = subprocess.run(
            [*self._prefix, *args],
            input=stdin,
            capture_output=True,
            cwd=self.work_tree,
            env=self.env,
            check=False,
        )
        if done.returncode not in ok:
            detail = done.stderr.decode(errors="replace").strip()
            raise GitError(f"git {' '.join(args[:3])} failed ({done.returncode}): {detail}")
        return done.stdout

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        """A long-running git (`cat-file --batch`) with pipes on stdin and stdout."""
        return subprocess.Popen(
            [*self._prefix, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.work_tree,
            env=self.env,
        )


def create_repository(git_dir: Path, workspace: Path) -> None:
    """Make the shadow repository at `git_dir` if it is not there yet (atomically: a killed
    creation leaves only a temporary folder beside it, never a half-made repository)."""
    if os.path.isfile(os.path.join(git_dir, "HEAD")):
        return
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    _clear_abandoned_creations(git_dir.parent)
    temporary = Path(tempfile.mkdtemp(prefix=".new-", dir=git_dir.parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    subprocess.run(
        ["git", "-c", "init.defaultBranch=latest", "init", "-q", "--bare", str(temporary)],
        check=True,
        capture_output=True,
        env=env,
    )
    config = ["git", "config", "-f", str(temporary / "config")]
    subprocess.run([*config, "core.bare", "false"], check=True, env=env)
    for hook in (temporary / "hooks").glob("*"):
        hook.unlink()
    (temporary / "info").mkdir(exist_ok=True)
    (temporary / "info" / "exclude").write_text(_EXCLUDE)
    (temporary / "info" / "attributes").write_text(_ATTRIBUTES)
    (temporary / "workspace").write_text(str(workspace) + "\n")
    try:
        os.rename(temporary, git_dir)
    except OSError:
        # Another process made it first; ours is not needed.
        subprocess.run(["rm", "-rf", str(temporary)], check=False)
        if not (git_dir / "HEAD").is_file():
            raise


ABANDONED_AFTER_S = 3600.0
"""A creation's temporary folder this old was left by a killed process (making one takes well under a second)."""


def _clear_abandoned_creations(root: Path) -> None:
    """Remove the temporary folders of creations killed part way (only old ones: a creation
    under way in another process is seconds old at most)."""
    now = time.time()
    for leftover in root.glob(".new-*"):
        try:
            if now - leftover.lstat().st_mtime > ABANDONED_AFTER_S:
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:  # another process cleared it first
            continue


class ShadowLock:
    """Holds a shadow repository for one operation at a time, between the threads and the
    processes of a host (an flock, released by the kernel if the holder dies).

    `overseer.lock` holds a byte, then the prune generation. The byte is `1` while an operation
    runs and `0` once it ended: finding `1` means its holder died (or failed) part way, and a git
    `*.lock` file that no process has open, and a restore's temporary files, are then its
    leftovers, cleared before going on. Checking one byte, instead of looking for leftovers every
    time, keeps a step's snapshot cheap. The generation changes with every prune, so a process
    keeping the repository open (`backend/checkpoints/_stage.py`) knows to open it again."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.generation = 0
        """The prune generation read when the lock was last taken."""
        self._threads = threading.Lock()
        self._descriptor: int | None = None

    def bump(self) -> None:
        """Say a prune happened (called holding the lock)."""
        assert self._descriptor is not None
        self.generation += 1
        os.pwrite(self._descriptor, self.generation.to_bytes(8, "big"), 1)

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._threads:
            if self._descriptor is None:
                flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                self._descriptor = os.open(self.git_dir / "overseer.lock", flags, 0o600)
            fcntl.flock(self._descriptor, fcntl.LOCK_EX)
            with self._holding(clear=True):
                yield

    @contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Hold it only if no thread nor process does now (never waits); yields whether it
        does. A dead holder's leftovers are not cleared here: then it yields False."""
        if self._descriptor is None or not self._threads.acquire(blocking=False):
            yield False
            return
        try:
            try:
                fcntl.flock(self._descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            with self._holding(clear=False) as holding:
                yield holding
        finally:
            self._threads.release()

    @contextmanager
    def _holding(self, *, clear: bool) -> Iterator[bool]:
        """With the flock taken: the busy byte and the generation; the flock released after.
        A dead holder's leftovers (the busy byte found set) are cleared with `clear`; without,
        it yields False and holds nothing. Busy while held: a journal record cut short by a
        kill is found and dropped by the next holder before anyone appends after it."""
        descriptor = self._descriptor
        assert descriptor is not None
        try:
            state = os.pread(descriptor, 9, 0)
            if state[:1] == _BUSY:
                if not clear:
                    yield False
                    return
                _clear_leftovers(self.git_dir)
            self.generation = int.from_bytes(state[1:9], "big")
            os.pwrite(descriptor, _BUSY, 0)
            yield True
            os.pwrite(descriptor, _IDLE, 0)  # not reached on an error: the next holder checks
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)


_BUSY, _IDLE = b"1", b"0"


def _clear_leftovers(git_dir: Path) -> None:
    pack_journal(git_dir)  # its last record may be cut short: only whole ones are kept
    names = ("index.lock", "HEAD.lock", "packed-refs.lock", "shallow.lock", "config.lock")
    locks = [git_dir / name for name in names]
    for folder, _dirs, files in os.walk(git_dir / "refs"):
        locks += [Path(folder, name) for name in files if name.endswith(".lock")]
    for lock in locks:
        if lock.exists():
            _wait_until_no_process_holds(lock)
            lock.unlink(missing_ok=True)
    journal = git_dir / JOURNAL
    if journal.is_file():
        # Written before a restore starts: the work tree, then each path it writes.
        work_tree, *written = journal.read_bytes().split(b"\0")
        for relative in written:
            if relative:
                temporary_path(Path(os.fsdecode(work_tree)), os.fsdecode(relative)).unlink(missing_ok=True)
        journal.unlink()


def _wait_until_no_process_holds(lock: Path) -> None:
    """A git process of ours outlived its parent (killed without its process group): let it
    finish before its lock counts as stale (bounded by LOCK_HELD_WAIT_S)."""
    deadline = time.monotonic() + LOCK_HELD_WAIT_S
    while (holder := _process_holding(lock)) is not None:
        if time.monotonic() > deadline:
            raise GitError(f"{lock} is held by a running process (pid {holder}); try again when it is done")
        time.sleep(0.05)


def _process_holding(path: Path) -> int | None:
    """The id of a process with `path` open, if any (Linux: /proc/<pid>/fd)."""
    wanted = str(path)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            for descriptor in os.scandir(f"/proc/{entry.name}/fd"):
                if os.readlink(descriptor.path) == wanted:
                    return int(entry.name)
        except OSError:  # gone, or not ours to look at
            continue
    return None


def temporary_path(work_tree: Path, relative: str) -> Path:
    """Where a restore writes `relative` before renaming it into place (same folder, same filesystem)."""
    target = work_tree / relative
    return target.with_name(f".{target.name}{TEMP_SUFFIX}")
