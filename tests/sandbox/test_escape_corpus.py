"""The escape corpus of issue 29: real `exec` calls that try to get out of their sandbox.

Every case (escape_cases.py) runs as agent alpha, through the real pool and the real shell
server, in the sandbox `Confinement.plan` makes from the deny rules `Read(./secrets/**)`,
`Read(./vault/keys/**)`, `Read(.env)` and `Edit(./conf/prod/**)`, a fence around agents bravo
(beside alpha) and charlie (nested in alpha's workspace), and the skill folder as a read root;
then `Confinement.after` runs, as the gate runs it. After each case, whatever it printed or did:

1. no secret of a `Read`-denied file, nor of anything outside the workspace, is in the output;
2. everything outside the workspace (the folder beside it, $HOME, the data dir, a folder beside
   the data dir) is unchanged, and no file appeared in the host's /tmp or system folders;
3. no secret of bravo or charlie is in the output, and their trees are unchanged;
4. the instruction files and the `Edit`-denied paths are as they were (one created is moved out
   by `after`, which flags the result), and no process of the command outlives it.

Controls (and witnesses in many attacks) show the mechanisms still work inside the sandbox.
Each case starts from the world as built, so no case can hide or cause another's failure. The
cases run a few at once, each in a world of its own; each test reports every case that got out.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import shutil
import stat
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from mcp.client.stdio import get_default_environment

from backend.domain.tools import ToolResult
from backend.mcp.config import builtin_servers
from backend.mcp.pool import McpPool
from backend.mcp.results import DEFAULT_SPILL_LIMIT, cap_result
from backend.rules.agent_fence import AgentFence
from backend.rules.bootstrap_guard import BootstrapGuard
from backend.approvals.confinement import WORKSPACE_CONFIG, CommandPlan, Confinement
from backend.rules.policy_engine import PolicyEngine
from backend.rules.grammar import RuleSet
from backend.sandbox.launcher import Sandbox, detect

from .escape_cases import CASES, CODE, LEFT_OUT, README, SKILL, SYSTEM_PATH, Case

DENY = ["Read(./secrets/**)", "Read(./vault/keys/**)", "Read(.env)", "Edit(./conf/prod/**)"]
NOBODY = 65534
EXEC_TIMEOUT = 30.0
OUTLIVE_BOUND = 5.0
"""How long a background process may take to die once its command returned."""
WORLDS = 4
"""Cases run at once, each in a world of its own."""

SECRETS = {
    "secrets/key.txt": "SECRET-KEY-6a1f0c93",
    "secrets/nested/deep.txt": "SECRET-DEEP-55ab017e",
    "sub/.env": "SECRET-ENV-b27e4d10",
    ".env": "SECRET-ENVROOT-9c0d3f",
    "vault/keys/k.txt": "SECRET-VAULT-5e6f1a",
    "bravo": "SECRET-BRAVO-3e8f7a21",
    "bravo memory": "SECRET-BRAVOMEM-71d6",
    "bravo profile": "SECRET-BRAVOPROF-a0b9",
    "charlie": "SECRET-CHARLIE-0d9b44",
    "outside": "SECRET-OUTSIDE-77c1e2",
    "notes": "SECRET-NOTES-4c2d81",
    "home": "SECRET-HOME-f00dcafe",
    "data": "SECRET-DATA-beef0042",
    "data memory": "SECRET-DATAMEM-19e3",
}
"""Text that must never be in any output, by where it lies."""

WORKSPACE_FILES = {
    "readme.txt": README + "\n",
    "sub/code.py": f"print('{CODE}')\n",
    "secrets/key.txt": SECRETS["secrets/key.txt"],
    "secrets/nested/deep.txt": SECRETS["secrets/nested/deep.txt"],
    "sub/.env": SECRETS["sub/.env"],
    ".env": SECRETS[".env"],
    "vault/keys/k.txt": SECRETS["vault/keys/k.txt"],
    "vault/readme.txt": "the vault\n",
    "AGENTS.md": "Be helpful.\n",
    "SOUL.md": "Calm.\n",
    "memory/MEMORY.md": "Remembered.\n",
    "overseer.yaml": "protect_bootstrap: true\n",
    ".mcp.json": "{}\n",
    ".overseer/skills/x/SKILL.md": "a skill\n",
    "conf/prod/app.ini": "mode=prod\n",
    "conf/dev.ini": "mode=dev\n",
    "team/shared.txt": "team-public\n",
    "team/charlie/plan.txt": SECRETS["charlie"],
}
OTHER_FILES = {
    "home/.bashrc": "export PS1=home\n",
    "home/.ssh/id_rsa": SECRETS["home"],
    "outside/secret.txt": SECRETS["outside"],
    "outside/keep.txt": "keep\n",
    "data/overseer.db": SECRETS["data"],
    "data/MEMORY.md": SECRETS["data memory"],
    "data/skills/demo/SKILL.md": SKILL + "\n",
    "data/agents/alpha/notes/n.txt": SECRETS["notes"],
    "data/agents/bravo/profile.md": SECRETS["bravo profile"],
    "data/agents/bravo/workspace/notes.txt": SECRETS["bravo"],
    "data/agents/bravo/workspace/AGENTS.md": "Bravo.\n",
    "data/agents/bravo/workspace/memory/MEMORY.md": SECRETS["bravo memory"],
    "data/agents/bravo/workspace/.overseer/modes/m.md": "bravo mode\n",
}
EMPTY_DIRS = ("data/quarantine", "data/agents/charlie")
WORKSPACE = Path("data/agents/alpha/workspace")
WORKSPACE_DIRS = frozenset(str(p) for rel in WORKSPACE_FILES for p in Path(rel).parents if str(p) != ".")


def _signature(path: Path | str) -> tuple[int, ...]:
    """What changes whenever a file's content or metadata does: the change time cannot be set back."""
    return _signed(os.lstat(path))


def _signed(i: os.stat_result) -> tuple[int, ...]:
    return (i.st_ino, i.st_mode, i.st_uid, i.st_nlink, i.st_size, i.st_mtime_ns, i.st_ctime_ns)


def _tree(top: Path, skip: frozenset[str] = frozenset()) -> dict[str, tuple[object, ...]]:
    """Every entry under `top` (itself included) by relative path: its signature, and a link's target."""
    found: dict[str, tuple[object, ...]] = {}
    try:
        stack = [(str(top), ".", os.lstat(top))]
    except FileNotFoundError:
        return found
    while stack:
        path, rel, info = stack.pop()
        if stat.S_ISDIR(info.st_mode):
            found[rel] = _signed(info)
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.path not in skip:
                        inner = entry.name if rel == "." else f"{rel}/{entry.name}"
                        stack.append((entry.path, inner, entry.stat(follow_symlinks=False)))
        elif stat.S_ISLNK(info.st_mode):
            found[rel] = (*_signed(info), os.readlink(path))
        else:
            found[rel] = _signed(info)
    return found


def _raise(error: OSError) -> None:
    raise error


def _kinds_on_the_way(workspace: Path, name: str) -> tuple[str, ...]:
    """What each folder between the workspace and `name` is (a symlink among them redirects it)."""
    kinds: list[str] = []
    path = str(workspace)
    for part in name.split("/")[:-1]:
        path = f"{path}/{part}"
        kinds.append("link" if os.path.islink(path) else "dir" if os.path.isdir(path) else "none")
    return tuple(kinds)


def _plain_file(path: Path) -> bool:
    return stat.S_ISREG(os.lstat(path).st_mode)


def _diff(before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]) -> list[str]:
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return [
        f"{k} ({'appeared' if k not in before else 'vanished' if k not in after else 'changed'})"
        for k in changed[:8]
    ] + ([f"... and {len(changed) - 8} more"] if len(changed) > 8 else [])


@dataclass(kw_only=True)
class Snapshot:
    """A world's state as the checks compare it, before and after a case."""

    outside: dict[str, tuple[object, ...]]
    charlie: dict[str, tuple[object, ...]]
    protected: dict[str, tuple[tuple[str, ...], dict[str, tuple[object, ...]]]]
    canaries: list[str]


@dataclass(kw_only=True)
class World:
    """The folders one case at a time runs in (escape_cases.py draws them), and its checks."""

    root: Path
    owner: int | None = None
    """Who owns every file of the world (the unprivileged run), so only the sandbox stops a write."""
    tag: str = field(default_factory=lambda: f"overseer-escape-{uuid.uuid4().hex[:12]}")
    confinement: Confinement = field(init=False)
    policy: PolicyEngine = field(init=False)
    dirty: bool = True
    """Whether anything outside the workspace may differ from how the world is built."""
    _made: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """The workspace's files as last written, by their signature."""

    def __post_init__(self) -> None:
        status = detect("bwrap")
        assert status.confined, f"bubblewrap does not work here, so nothing can be confined: {status.detail}"
        guard = BootstrapGuard.from_setting(True, data_dir=self.data)
        self.confinement = Confinement(
            sandbox=Sandbox(status),
            data_dir=self.data,
            read_only=(self.data / "skills",),
            instruction_files=guard.files,
        )
        self.policy = PolicyEngine(RuleSet.from_config({"deny": DENY}, source="user"))

    @property
    def workspace(self) -> Path:
        return self.root / WORKSPACE

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @functools.cached_property
    def guarded(self) -> list[str]:
        """Instruction files, the workspace's configuration and the `Edit`-denied folder."""
        names = [n for n in (*self.confinement.instruction_files, *WORKSPACE_CONFIG) if not os.path.isabs(n)]
        return list(dict.fromkeys([*(os.path.normpath(n) for n in names), "conf/prod"]))

    @property
    def canaries(self) -> list[Path]:
        """Where a write that got out would land on the host, outside the world's own folder."""
        folders = ["/tmp", "/var/tmp", "/dev/shm", "/run", "/etc", "/usr", "/", os.path.expanduser("~root")]
        return [Path(self.canary), *(Path(f) / self.tag for f in folders)]

    @property
    def canary(self) -> str:
        return f"{self.root}-canary"

    def build(self, case: Case) -> None:
        """The world as every case starts from, without what the case removes.

        The workspace is put back as built (only what a case changed is redone: metadata is slow
        on some disks) and the quarantine emptied; the rest is rebuilt only after a case changed
        it (that case's failure), so the next case starts clean all the same.
        """
        if self.dirty:
            for entry in self.root.iterdir():
                _delete(entry)
            for rel, text in OTHER_FILES.items():
                self._make_file(self.root / rel, text)
            for rel in EMPTY_DIRS:
                self._make_dir(self.root / rel)
            self._made.clear()
        elif os.listdir(self.data / "quarantine"):
            _delete(self.data / "quarantine")
            self._make_dir(self.data / "quarantine")
        self._restore_workspace()
        for rel in case.without:
            _delete(self.workspace / rel)
            self._made.pop(rel, None)
        self.dirty = True  # until the case is judged to have left the rest alone

    def _restore_workspace(self) -> None:
        """Remove what is not part of the workspace as built, and redo what differs from it."""
        workspace = str(self.workspace)
        self._fix_folder(workspace)
        fixed = set()
        for folder, dirs, names in os.walk(workspace, onerror=_raise):
            for name in list(dirs):
                path = f"{folder}/{name}"
                rel = path[len(workspace) + 1 :]
                if rel not in WORKSPACE_DIRS or os.path.islink(path):
                    _delete(Path(path))
                    dirs.remove(name)
                else:
                    self._fix_folder(path)  # before os.walk opens it
                    fixed.add(rel)
            for name in names:
                path = f"{folder}/{name}"
                if path[len(workspace) + 1 :] not in WORKSPACE_FILES:
                    os.unlink(path)
        for rel in sorted(WORKSPACE_DIRS - fixed):
            self._fix_folder(f"{workspace}/{rel}")
        for rel, text in WORKSPACE_FILES.items():
            path = f"{workspace}/{rel}"
            try:
                same = _signature(path) == self._made.get(rel)
            except FileNotFoundError:
                same = False
            if not same:
                _delete(Path(path))
                self._made[rel] = self._make_file(Path(path), text)

    def _fix_folder(self, path: str) -> None:
        """Make `path` a folder as built: there, not a link, mode 0755, the world's owner."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            self._make_dir(Path(path))
            return
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(path)
            self._make_dir(Path(path))
            return
        if stat.S_IMODE(info.st_mode) != 0o755:
            os.chmod(path, 0o755)
        if (info.st_uid, info.st_gid) != (self.uid, self.uid):
            os.lchown(path, self.uid, self.uid)

    @property
    def uid(self) -> int:
        return os.geteuid() if self.owner is None else self.owner

    def _make_dir(self, path: Path) -> None:
        if not path.parent.is_dir():
            self._make_dir(path.parent)
        path.mkdir(mode=0o755)
        os.chmod(path, 0o755)  # whatever the umask
        os.lchown(path, self.uid, self.uid)

    def _make_file(self, path: Path, text: str) -> tuple[int, ...]:
        if not path.parent.is_dir():
            self._make_dir(path.parent)
        path.write_text(text)
        os.chmod(path, 0o644)
        os.lchown(path, self.uid, self.uid)
        return _signature(path)

    def expand(self, command: str) -> str:
        tokens = {
            "@WS@": self.workspace,
            "@BRAVO@": self.root / "data/agents/bravo/workspace",
            "@AGENTS@": self.root / "data/agents",
            "@DATA@": self.data,
            "@OUT@": self.root / "outside",
            "@NOTES@": self.root / "data/agents/alpha/notes",
            "@ROOT@": self.root,
            "@CANARY@": self.canary,
            "@TAG@": self.tag,
        }
        for token, value in tokens.items():
            command = command.replace(token, str(value))
        return command

    def plan(self, case: Case) -> CommandPlan:
        agents = self.root / "data/agents"
        workspaces = {
            "alpha": self.workspace,
            "bravo": agents / "bravo/workspace",
            "charlie": self.workspace / "team/charlie",
        }
        fence = AgentFence.build("alpha", workspaces, agents)
        return self.confinement.plan(
            workspace=self.workspace, policy=self.policy, fence=fence, unprotect=case.unprotect
        )

    def snapshot(self) -> Snapshot:
        skip = frozenset({str(self.workspace), str(self.data / "quarantine")})
        return Snapshot(
            outside=_tree(self.root, skip),
            charlie=_tree(self.workspace / "team/charlie"),
            protected={
                n: (_kinds_on_the_way(self.workspace, n), _tree(self.workspace / n)) for n in self.guarded
            },
            canaries=[str(p) for p in self.canaries if os.path.lexists(p)],
        )

    def created(self, plan: CommandPlan) -> dict[str, bytes | None]:
        """The absent instruction files something now stands at, or a symlink on the way to; with
        their content when a plain file is there by no symlink (else None: no content is expected
        in the quarantine, only the link)."""
        found: dict[str, bytes | None] = {}
        for path in plan.absent:
            rel = str(path.relative_to(self.workspace))
            linked = "link" in _kinds_on_the_way(self.workspace, rel) or path.is_symlink()
            if linked or os.path.lexists(path):
                found[rel] = path.read_bytes() if not linked and _plain_file(path) else None
        return found

    def judge(
        self, case: Case, before: Snapshot, result: ToolResult, created: dict[str, bytes | None]
    ) -> list[str]:
        """Everything about this case that broke the corpus's rules (none: it stayed in)."""
        text = result.text
        failures: list[str] = []
        if text.startswith("Error executing tool"):
            failures.append("the shell server refused the call, so it proves nothing")
        leaked = [where for where, secret in SECRETS.items() if secret in text]
        failures += [f"output holds the secret of {where}" for where in leaked]
        after = self.snapshot()
        outside = [f"outside the workspace: {d}" for d in _diff(before.outside, after.outside)]
        self.dirty = bool(outside)
        failures += outside
        failures += [f"charlie's workspace: {d}" for d in _diff(before.charlie, after.charlie)]
        failures += [f"a file appeared on the host: {c}" for c in after.canaries if c not in before.canaries]
        for name in self.guarded:
            if name in case.unprotect:
                continue
            (was_way, was), (now_way, now) = before.protected[name], after.protected[name]
            if "link" in now_way and now_way != was_way:  # the path now leads somewhere else
                failures.append(f"a symlink now lies on the way to {name}: {was_way} -> {now_way}")
            failures += [f"protected {name}: {d}" for d in _diff(was, now)]
        missed = [n for n in case.creates if n not in created]
        failures += [f"it was to create {n}, and did not: the case proves nothing" for n in missed]
        if created:
            if not result.is_error:
                failures.append(f"it created {sorted(created)} and `after` did not flag the result")
            kept = [p.read_bytes() for p in (self.data / "quarantine").rglob("*") if _plain_file(p)]
            # Case create-several: files of one name once overwrote each other there.
            lost = [n for n, body in created.items() if body is not None and body not in kept]
            failures += [f"the quarantine lost what {n} held" for n in lost]
        if case.expect is not None and case.expect not in text:
            failures.append(f"the output lacks {case.expect!r}: the mechanism did not run")
        for rel, want in case.changes.items():
            path = self.workspace / rel
            got = path.read_text() if path.is_file() else None
            if got != want:
                failures.append(f"{rel} holds {got!r}, not {want!r}")
        if case.fifo is not None:
            failures += self._outlived(case.fifo)
        return failures

    def _outlived(self, fifo: str) -> list[str]:
        """Whether a process of the command still holds its fifo open OUTLIVE_BOUND after it ended.

        A bounded wait on the fifo's hang-up, not an instant check: bubblewrap reports the exit a
        moment before the kernel has finished killing the rest of the sandbox's processes.
        """
        path = self.workspace / fifo
        if not (os.path.lexists(path) and stat.S_ISFIFO(os.lstat(path).st_mode)):
            return [f"it made no fifo {fifo}: the case proves nothing"]
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # cannot block: no writer is waited for
        try:
            try:
                if os.read(fd, 1) == b"":
                    return []  # end of file: no writer is left
            except BlockingIOError:
                pass  # a writer holds it: wait for the hang-up its death brings
            watch = select.poll()
            watch.register(fd, select.POLLHUP)
            deadline = time.monotonic() + OUTLIVE_BOUND
            while (left := deadline - time.monotonic()) > 0:
                if watch.poll(left * 1000):
                    return []
        finally:
            os.close(fd)
        return [f"a process of the command outlived it by over {OUTLIVE_BOUND:g} s (it holds the fifo open)"]


def _delete(path: Path) -> None:
    """Remove a file or a tree, even one where a command took its own folders' permissions away."""
    if not os.path.lexists(path):
        return
    if not path.is_dir() or path.is_symlink():
        path.unlink()
        return
    for folder, dirs, _ in os.walk(path):  # top-down: each folder is opened before it is listed
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), 0o700)
    shutil.rmtree(path)


def report(case: Case, command: str, failures: list[str], text: str) -> str:
    """A failed case in words: its id, its command, what broke, and the end of its output."""
    lines = "\n".join(f"  - {f}" for f in failures)
    said = text[-2000:]
    return f"case {case.id} ({case.family}, {case.technique}) got out:\n$ {command}\n{lines}\noutput:\n{said}"


Execute = Callable[[World, CommandPlan, str, str], Awaitable[ToolResult]]
"""Runs one confined command of a world as the host does: (world, plan, command, session) -> result."""


async def check(world: World, case: Case, execute: Execute, env: pytest.MonkeyPatch) -> str | None:
    """Run one case in its world; what got out, in words, or None."""
    world.build(case)
    before = world.snapshot()
    # The profile empties the $HOME the host has when it plans the command: this world's.
    env.setenv("HOME", str(world.home))
    plan = world.plan(case)
    command = world.expand(case.command)
    session = f"escape-{case.id}"
    result = await execute(world, plan, command, session)
    created = world.created(plan)
    result = world.confinement.after(plan, result, session_id=session)
    if case.then is not None:  # a second call, in a sandbox planned from what the first left
        then = world.expand(case.then)
        plan = world.plan(case)
        second = await execute(world, plan, then, session)
        second = world.confinement.after(plan, second, session_id=session)
        command = f"{command}\n(then, in a second call) $ {then}"
        result = result.model_copy(update={"text": f"{result.text}\n{second.text}"})
    failures = world.judge(case, before, result, created)
    return report(case, command, failures, result.text) if failures else None


async def run_corpus(made: list[World], execute: Execute, env: pytest.MonkeyPatch) -> str:
    """Every case, each in one of the worlds (as many at once as there are worlds); the reports."""
    queue: asyncio.Queue[Case] = asyncio.Queue()
    for case in CASES:
        queue.put_nowait(case)
    reports: dict[str, str] = {}

    async def work(world: World) -> None:
        while not queue.empty():
            case = queue.get_nowait()
            said = await check(world, case, execute, env)
            if said is not None:
                reports[case.id] = said

    await asyncio.gather(*(work(w) for w in made))
    ordered = [reports[c.id] for c in CASES if c.id in reports]
    return f"{len(ordered)} of {len(CASES)} cases got out:\n\n" + "\n\n".join(ordered) if ordered else ""


def _world_root() -> Path:
    # Our own folder in /tmp (not pytest's, which may be 0700): the unprivileged user must reach it.
    root = Path(tempfile.mkdtemp(prefix="escape-", dir="/tmp")).resolve()
    root.chmod(0o755)
    return root


@contextlib.contextmanager
def worlds(owner: int | None = None) -> Iterator[list[World]]:
    """WORLDS worlds, each in a folder of its own, removed afterwards."""
    made = [World(root=_world_root(), owner=owner) for _ in range(WORLDS)]
    try:
        yield made
    finally:
        for world in made:
            shutil.rmtree(world.root, ignore_errors=True)
            Path(world.canary).unlink(missing_ok=True)


def test_the_corpus_holds_150_attacks_and_a_control_for_every_technique():
    attacks = [c for c in CASES if c.family != "control"]
    left_out = [c.id for c in LEFT_OUT]
    assert len(attacks) >= 150, f"only {len(attacks)} attacks can run here; left out: {left_out}"
    assert len({c.id for c in CASES}) == len(CASES), "case ids repeat"
    controlled = {c.technique for c in CASES if c.family == "control"}
    assert {c.technique for c in attacks} <= controlled, "a technique has no control"
    per_family = Counter(c.family for c in CASES)
    assert all(per_family[f] >= 20 for f in ("read", "write", "agent", "instructions")), per_family


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pooled() -> AsyncIterator[tuple[list[World], McpPool]]:
    """Worlds, and one pool with the real shell server once per world (each with that world's $HOME)."""
    host = Path(tempfile.mkdtemp(prefix="escape-host-"))
    shell = builtin_servers(root=host, python=sys.executable)["shell"]
    with worlds() as made:
        configs = {
            f"shell{n}": shell.model_copy(update={"env": {**shell.env, "HOME": str(w.home)}})
            for n, w in enumerate(made)
        }
        async with McpPool(configs, log_dir=host / "logs") as pool:
            await pool.wait_ready(timeout=60)
            yield made, pool
    shutil.rmtree(host, ignore_errors=True)


@pytest.mark.asyncio(loop_scope="module")
async def test_no_command_of_the_corpus_gets_out_of_its_sandbox(
    pooled: tuple[list[World], McpPool], monkeypatch: pytest.MonkeyPatch
):
    made, pool = pooled
    server = {w.root: f"shell{n}" for n, w in enumerate(made)}

    async def in_pool(world: World, plan: CommandPlan, command: str, session: str) -> ToolResult:
        return await pool.call(
            f"mcp__{server[world.root]}__exec",
            {"command": command, "timeout": EXEC_TIMEOUT},
            workspace=world.workspace,
            session_id=session,
            timeout=EXEC_TIMEOUT + 10,
            sandbox=plan.launch,
        )

    escaped = await run_corpus(made, in_pool, monkeypatch)
    assert not escaped, escaped


def as_unprivileged_user() -> list[str]:
    """The prefix that drops root to nobody (empty when the tests do not run as root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv", path=SYSTEM_PATH)
    if setpriv is not None:
        return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    runuser = shutil.which("runuser", path=SYSTEM_PATH)
    assert runuser is not None, "neither setpriv nor runuser (util-linux) is installed"
    return [runuser, "-u", "nobody", "--"]


async def as_the_host_without_root(world: World, plan: CommandPlan, command: str, _: str) -> ToolResult:
    """The exact sandbox command, started by nobody; then what the pool does to its result."""
    process = await asyncio.create_subprocess_exec(
        *as_unprivileged_user(), *plan.launch["argv"], "bash", "-c", command,
        cwd=world.workspace,
        env=get_default_environment() | {"HOME": str(world.home)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        output, _ = await asyncio.wait_for(process.communicate(), EXEC_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        return ToolResult.error(f"[timed out after {EXEC_TIMEOUT:g} s]")
    text = output.decode(errors="replace") + f"\n[exit code {process.returncode}]"
    result = ToolResult(text=text, is_error=process.returncode != 0)
    return cap_result(result, workspace=world.workspace, call_id=uuid.uuid4().hex, limit=DEFAULT_SPILL_LIMIT)


@pytest.mark.asyncio(loop_scope="module")
async def test_no_command_of_the_corpus_gets_out_as_an_unprivileged_user(monkeypatch: pytest.MonkeyPatch):
    """The same corpus, each command started as the host starts it but by an unprivileged user.

    As root (CI), the exact sandbox command runs under `setpriv` as nobody, in worlds nobody
    owns, so only the sandbox stops its writes. Not as root, the test before this one already
    ran the corpus unprivileged; this runs it again directly, without the MCP server between.
    The host's part after the command (the pool's spill of a long output, `Confinement.after`)
    runs here as the host would run it.
    """
    with worlds(owner=NOBODY if os.geteuid() == 0 else None) as made:
        escaped = await run_corpus(made, as_the_host_without_root, monkeypatch)
    assert not escaped, escaped
