"""The sandbox of each command, made from the rules, the session and the host's settings.

Rules read a command's text to ask precise questions; this is what holds whatever the text
hides: every `exec` runs in a sandbox (backend/sandbox) that shows it its session's workspace
read-write, the system and read roots read-only, and nothing else of the host. Inside, what a
`Read` deny rule names is emptied; what an `Edit`/`Write` deny rule names, the instruction files
and the workspace's own configuration are read-only, so no program, however it is spelled, can
read or change them. An instruction change a person allowed runs with just those files writable.

The kernel cannot stop a command from *creating* an instruction file that did not exist (a bind
mount needs something to bind over), so those are checked after the command: a new one is moved
out of the workspace into the data dir's quarantine, and the model is told how to ask instead.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.domain.tools import ToolResult
from backend.rules.agent_fence import AgentFence
from backend.rules.path_match import PathPattern
from backend.rules.policy_engine import Evaluation, PolicyEngine
from backend.rules.grammar import FILE_READ_TOOLS, FILE_WRITE_TOOLS, SHELL_TOOL, Rule
from backend.sandbox.config import AgentSandbox
from backend.sandbox.hosts import HostAllowlist
from backend.sandbox.launcher import Sandbox
from backend.sandbox.profile import NetworkAccess, SandboxProfile
from backend.sandbox.proxy import EgressProxy

WORKSPACE_CONFIG: tuple[str, ...] = ("overseer.yaml", ".mcp.json", ".overseer/skills", ".overseer/modes")
"""Workspace files that configure the host or the prompt: read-only to every command."""
MAX_PATTERN_ENTRIES = 20_000
"""How many files a deny rule's pattern may be checked against per command before it refuses."""
_GLOB = frozenset("*?[")


OUTSIDE_ARGUMENT = "outside_sandbox"
"""The `exec` argument by which the model asks to run one command outside the sandbox."""
OUTSIDE_REASON = (
    "The agent asks to run this command OUTSIDE the sandbox, with everything your user can reach "
    "(other folders, ~/.ssh, the network). Allowed once at a time, never for the session or always."
)


@dataclass(kw_only=True)
class UnconfinedRun(Evaluation):
    """An `ask` of its own kind: the call wants to run outside the sandbox."""


class ConfinementError(Exception):
    """The sandbox of a command could not be made; the command does not run."""


@dataclass(frozen=True, kw_only=True)
class CommandPlan:
    """One command's sandbox, and the instruction files it must not create."""

    launch: dict[str, Any]
    workspace: Path
    absent: tuple[Path, ...]
    """Protected files that did not exist before the command: checked after it."""


@dataclass(kw_only=True)
class Confinement:
    """Makes each command's sandbox (see the module doc)."""

    sandbox: Sandbox
    data_dir: Path
    hidden: tuple[Path, ...] = ()
    """Folders of the host's that no command may see, besides the data dir: a checkpoints folder
    moved out of it (`checkpoints.dir`), whose snapshots a rewind would write back (issue 32)."""
    read_only: tuple[Path, ...] = ()
    """Read roots (skill folders) and the folders `sandbox.read_only` lists."""
    instruction_files: tuple[str, ...] = ()
    """Workspace-relative instruction files (the bootstrap guard's), kept read-only."""
    egress: EgressProxy | None = None
    """The host's egress proxy, when commands may use the network through it."""
    allowlist_patterns: tuple[str, ...] = ()
    """Hosts reached through the proxy without asking (`sandbox.network.allow`)."""
    network_on: bool = False
    """Whether commands get the proxy (`sandbox.network`): an agent's own may turn it on for it."""
    auto_allow: bool = False
    """`sandbox.auto_allow`: a command that would be asked only by default runs without asking."""
    allow_unconfined: bool = True
    """`sandbox.allow_unconfined`: whether a command may ask to run outside the sandbox at all."""

    def __post_init__(self) -> None:
        self.allowlist = HostAllowlist(self.allowlist_patterns)

    def applies(self, name: str) -> bool:
        """Whether calls of this tool run commands (and so get a sandbox)."""
        return name == SHELL_TOOL

    def review(self, name: str, evaluation: Evaluation, agent: AgentSandbox | None = None) -> Evaluation:
        """With `sandbox.auto_allow`, a command the rules leave to the default question is allowed:
        it runs confined. An ask or deny rule still decides, and instruction changes and other
        agents' folders are judged after this (they still ask, or deny)."""
        auto_allow = self.auto_allow if agent is None or agent.auto_allow is None else agent.auto_allow
        if not (auto_allow and self.applies(name) and self.sandbox.status.confined):
            return evaluation
        if evaluation.verdict != "ask" or evaluation.rule is not None or evaluation.source not in (None, "default"):
            return evaluation
        networked = self.network_on or (agent is not None and agent.network.on)
        network = "only through the egress proxy, which asks for new hosts" if networked else "no network"
        reason = f"runs confined in the sandbox ({self.sandbox.status.backend}, {network}): sandbox.auto_allow"
        return Evaluation(verdict="allow", reason=reason, source="sandbox.auto_allow")

    def wants_outside(self, name: str, arguments: dict[str, Any]) -> bool:
        """Whether a call asks to run its command outside a sandbox that is in force."""
        return self.applies(name) and arguments.get(OUTSIDE_ARGUMENT) is True and self.sandbox.status.confined

    def review_outside(self, name: str, arguments: dict[str, Any], evaluation: Evaluation) -> Evaluation:
        """The last word on a call that asks to run outside the sandbox: refused where an admin
        forbids it, a deny stays a deny, and anything else asks a person, whatever allowed it."""
        if not self.wants_outside(name, arguments):
            return evaluation
        if not self.allow_unconfined:
            reason = "an admin forbids running commands outside the sandbox (sandbox.allow_unconfined: false)"
            return Evaluation(verdict="deny", reason=reason, source="sandbox")
        if evaluation.verdict == "deny":
            return evaluation
        return UnconfinedRun(verdict="ask", reason=OUTSIDE_REASON, source="sandbox")

    async def network_for(self, session_id: str, agent: AgentSandbox | None = None) -> Path | None:
        """The session's proxy socket (opened now if need be), or None when commands get no network.

        The host's allowlist, plus the agent's own; the proxy is on where either turns it on."""
        on = self.network_on or (agent is not None and agent.network.on)
        if not on or self.egress is None or not self.sandbox.status.supports_proxy:
            return None
        allowlist = self.allowlist if agent is None else HostAllowlist([*self.allowlist_patterns, *agent.network.allow])
        return await self.egress.open_session(session_id, allowlist)

    def plan(
        self,
        *,
        workspace: Path,
        policy: PolicyEngine,
        fence: AgentFence | None = None,
        unprotect: Iterable[str] = (),
        proxy_socket: Path | None = None,
        outside: bool = False,
    ) -> CommandPlan:
        """The sandbox of one command of a session whose workspace is `workspace`.

        `unprotect`: instruction files a person allowed this very command to change.
        `outside`: a person allowed this one command to run outside the sandbox.
        Raises ConfinementError when a deny rule's paths cannot all be found.
        """
        if outside:
            return CommandPlan(launch={"unconfined": True, "backend": "off"}, workspace=workspace, absent=())
        workspace = Path(os.path.realpath(workspace))
        allowed = {os.path.normpath(f) for f in unprotect}
        names = [n for n in (*self.instruction_files, *WORKSPACE_CONFIG) if not os.path.isabs(n)]
        guarded = [workspace / n for n in dict.fromkeys(os.path.normpath(n) for n in names) if n not in allowed]
        read_denied, write_denied = self._denied_paths(policy, workspace)
        hidden = [Path(os.path.realpath(p)) for p in (self.data_dir, *self.hidden)]
        hidden += [*read_denied, *_other_agents(fence)]
        network: NetworkAccess = "proxy" if proxy_socket is not None else "none"
        profile = SandboxProfile(
            workspace=workspace,
            read_only=self.read_only,
            hidden=tuple(hidden),
            protected=tuple(p for p in (*guarded, *write_denied) if os.path.lexists(p)),
            pinned=tuple(p for p in guarded if not os.path.lexists(p)),
            network=network,
            proxy_socket=proxy_socket if network == "proxy" else None,
        )
        absent = tuple(p for p in guarded if not os.path.lexists(p))
        return CommandPlan(launch=self.sandbox.launch(profile), workspace=workspace, absent=absent)

    def after(self, plan: CommandPlan, result: ToolResult, *, session_id: str) -> ToolResult:
        """Move instruction files the command created out of the workspace, and say so.

        Looked at name by name from the workspace, never through a symlink: a link the command
        planted on the way (`memory -> ../other-agent/memory`) is what is moved, not its target.
        """
        created = dict.fromkeys(c for p in plan.absent if (c := _created(plan.workspace, p)) is not None)
        if not created:
            return result
        quarantine = self.data_dir / "quarantine" / session_id / time.strftime("%Y%m%dT%H%M%S")
        moved: list[str] = []
        for path in created:
            target = quarantine / path.relative_to(plan.workspace)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.move(str(path), str(target))  # a rename; across devices it copies links as links
            moved.append(f"{path} (kept at {target})")
        note = (
            "\n[sandbox: the command created instruction files, which only a person's approval may "
            f"change; they were moved out of the workspace: {', '.join(moved)}. To make such a file, "
            "use write_file, which asks a person.]"
        )
        return result.model_copy(update={"text": result.text + note, "is_error": True})

    def _denied_paths(self, policy: PolicyEngine, workspace: Path) -> tuple[list[Path], list[Path]]:
        """The existing paths `Read` deny rules name (to empty) and `Edit`/`Write` ones (read-only)."""
        read: list[Path] = []
        write: list[Path] = []
        roots = [workspace, *self.read_only]
        for rule in policy.rules.rules("deny"):
            if rule.kind != "path" or rule.carve_out or not isinstance(rule.specifier, PathPattern):
                continue
            if _selects_any(rule, FILE_READ_TOOLS):
                read.extend(concrete_paths(rule.specifier, workspace, roots))
            elif _selects_any(rule, FILE_WRITE_TOOLS):
                write.extend(concrete_paths(rule.specifier, workspace, roots))
        return read, write


def concrete_paths(pattern: PathPattern, workspace: Path, roots: Sequence[Path]) -> list[Path]:
    """The existing paths a pattern names now: its literal part, or what a bounded walk finds.

    A folder the pattern covers whole (`secrets/**`) is named once, not file by file.
    """
    body = pattern.pattern.lstrip("\\")
    if pattern.anchor == "anywhere":
        starts = [Path(os.path.realpath(r)) for r in roots]
    else:
        base = {"absolute": Path("/"), "home": Path.home(), "workspace": workspace}[pattern.anchor]
        parts = [p for p in body.strip("/").split("/") if p]
        literal: list[str] = []
        for part in parts:
            if _GLOB & set(part) or part == "**":
                break
            literal.append(part)
        start = base.joinpath(*literal)
        if not os.path.lexists(start):
            return []
        if len(literal) == len(parts) or parts[len(literal) :] == ["**"]:
            return [start]
        starts = [start]
    found: list[Path] = []
    budget = MAX_PATTERN_ENTRIES
    for start in starts:
        for folder, dirs, files in os.walk(start):
            budget -= len(dirs) + len(files)
            if budget < 0:
                raise ConfinementError(
                    f"the deny rule pattern {pattern.text!r} would have to be checked against more than "
                    f"{MAX_PATTERN_ENTRIES} files to build the sandbox; anchor it to a folder "
                    "(e.g. ./secrets/**) so the sandbox can hide it whole"
                )
            kept: list[str] = []
            for name in dirs:
                path = os.path.join(folder, name)
                if pattern.matches(path, workspace=workspace, everywhere=True, as_dir=True):
                    found.append(Path(path))
                else:
                    kept.append(name)
            dirs[:] = kept
            found.extend(
                Path(os.path.join(folder, n))
                for n in files
                if pattern.matches(os.path.join(folder, n), workspace=workspace, everywhere=True)
            )
    return found


def _created(workspace: Path, path: Path) -> Path | None:
    """What now stands at `path` (or on the way to it) that did not: the first symlink met, else
    the path itself when it exists; None when nothing does."""
    current = workspace
    for name in path.relative_to(workspace).parts:
        current = current / name
        if os.path.islink(current):
            return current
        if not os.path.lexists(current):
            return None
    return current


def _selects_any(rule: Rule, names: Iterable[str]) -> bool:
    return any(rule.tools.selects(name) for name in names)


def _other_agents(fence: AgentFence | None) -> list[Path]:
    if fence is None:
        return []
    return [Path(folder) for folder, owner in fence.roots if owner != fence.agent_id]
