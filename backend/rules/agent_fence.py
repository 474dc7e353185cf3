"""Each named agent works only in its own workspace (issue 19): a fence around the others'.

The file and shell servers are confined to the session's workspace per call, but the shell only
starts there: `cat ../reviewer/notes.md` or an absolute path reads another agent's files once a
rule like `Bash(cat *)` allows it. So a call of agent A that may touch, read or write, a path
inside another configured agent's workspace or its folder under the data dir's `agents/` is
denied, whatever would otherwise allow it (rules, session allows, `--approve all`, auto-approve).

A path belongs to the agent whose folder holds it most deeply: when one workspace is nested in
another (main's is a parent folder), the inner one is fenced for the outer agent, and the rest of
the outer one for the inner agent. A program that removes or moves a folder (rm, mv, rsync...)
also may not name one that holds another agent's folder.

What a call may touch is read as bootstrap_writes reads it (call_paths): a file tool's path
arguments; every word of a shell command (symlinks, `..`, `~`, braces, globs expanded against the
disk), its redirections, and every path-like token in its text (input redirections, inline code).
When the targets are known only as the line runs (unparseable, `cd`, `$VAR`, xargs, an
interpreter, a here-document), a line naming another agent's folder is denied too: fail closed.

Limits: as for bootstrap_writes, this reads the command's text. A script that opens another
agent's files by itself, a path assembled at run time from parts never spelled out, or a
recursive read of a folder that holds a nested agent's workspace (`grep -r x .` by the outer
agent) is not caught; only a sandbox around the process could.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from backend.rules.call_paths import (
    GLOB,
    PLAIN,
    REMOVERS,
    analysed,
    argument_values,
    brace_expansions,
    path_arguments,
    unwrapped,
)
from backend.rules.path_match import path_candidates
from backend.rules.policy_engine import Evaluation, ToolCallView, is_read_only
from backend.rules.grammar import SHELL_TOOL
from backend.rules.shell_match import CommandAnalysis
from backend.rules.shell_wrappers import SHELLS, program_name

SOURCE = "agent_fence"
DEFAULT_FOLDER = "workspace"
"""The last part of a default workspace (`<data dir>/agents/<id>/workspace`): no agent's own name."""
_INTERPRETERS = frozenset(
    {"python", "python3", "node", "deno", "bun", "perl", "ruby", "php", "lua", "Rscript", "xargs", *SHELLS}
)
# A path-like token inside text that is not one path (inline code, a redirection, `a:b` lists).
_TOKEN = re.compile(r"[^\s'\"`;|&<>(){}$=:,]*/[^\s'\"`;|&<>(){}$=:,]*|\.\.")
_GLOB_CHARS = re.compile(r"[*?\[]")
_MAX_GLOB_MATCHES = 1000


@dataclass(frozen=True)
class Reached:
    """Another agent's folder a call may touch: whose, and how the call names it."""

    owner: str
    what: str


@dataclass(frozen=True)
class AgentFence:
    """The folders of the agents other than `agent_id` (see the module doc); built once per turn."""

    agent_id: str
    roots: tuple[tuple[str, str], ...]
    """(folder, owner) for every agent, own included, each spelling (as written, symlinks
    resolved), deepest first: the first that holds a path owns it."""
    names: tuple[tuple[re.Pattern[str], str], ...]
    """(pattern, owner): the other agents' folder names, looked for in lines only running resolves."""

    @classmethod
    def build(cls, agent_id: str, workspaces: Mapping[str, Path], agents_dir: Path) -> AgentFence | None:
        """The fence for `agent_id`, given every agent's workspace; None when there is no other agent
        (a single-agent host pays nothing)."""
        if not any(other != agent_id for other in workspaces):
            return None
        roots: dict[str, str] = {}
        for owner, workspace in workspaces.items():
            for folder in (workspace, agents_dir / owner):
                for spelling in (os.path.normpath(folder), os.path.realpath(folder)):
                    roots.setdefault(spelling, owner)
        own_parts = {p for root, owner in roots.items() if owner == agent_id for p in root.split("/") if p}
        names: dict[str, str] = {}
        for owner, workspace in workspaces.items():
            if owner == agent_id:
                continue
            candidates = [owner] if (agents_dir / owner).is_dir() else []
            if workspace.name != DEFAULT_FOLDER:
                candidates.append(workspace.name)
            for name in candidates:
                if name and name not in own_parts:  # never fence the agent's own path by its name
                    names.setdefault(name, owner)
        ordered = sorted(roots.items(), key=lambda item: len(item[0]), reverse=True)
        patterns = tuple((re.compile(rf"(?<![\w.-]){re.escape(n)}(?![\w-]|\.\w)"), o) for n, o in names.items())
        return cls(agent_id=agent_id, roots=tuple(ordered), names=patterns)

    def review(self, view: ToolCallView, evaluation: Evaluation) -> Evaluation:
        """The verdict, made a deny that says why when the call may reach another agent's folder."""
        reached = self.reached(view)
        if reached is None:
            return evaluation
        reason = (
            f"{reached.what} belongs to agent '{reached.owner}'; each agent works only in its own "
            f"workspace (this session is agent '{self.agent_id}')"
        )
        return Evaluation(verdict="deny", reason=reason, source=SOURCE)

    def reached(self, view: ToolCallView) -> Reached | None:
        """Another agent's folder the call may touch, or None."""
        walk = _Walk(self, view.workspace)
        if view.name == SHELL_TOOL:
            command = view.arguments.get("command") if isinstance(view.arguments, dict) else None
            if isinstance(command, str):
                walk.shell(analysed(command))
        else:
            holders = not is_read_only(view)
            for value in path_arguments(view.arguments):
                walk.path(value, value, holders=holders)
        return walk.found

    def owner(self, path: str) -> str | None:
        """The agent whose folder holds `path` most deeply, or None."""
        for root, owner in self.roots:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return owner
        return None

    def held(self, path: str) -> str | None:
        """Another agent whose folder lies inside `path` (removing `path` removes it), or None."""
        inside = path.rstrip("/") + "/"
        for root, owner in self.roots:
            if owner != self.agent_id and root.startswith(inside):
                return owner
        return None


class _Walk:
    """Looks at one call's path-like parts; `found` is the first other agent's folder it reaches."""

    def __init__(self, fence: AgentFence, workspace: Path) -> None:
        self.fence = fence
        self.workspace = workspace
        self.found: Reached | None = None

    def path(self, value: str, what: str, *, holders: bool = False) -> None:
        """A value used as a path as written (spaces and all): each reading of it."""
        for candidate in path_candidates(value, self.workspace) or []:
            owner = self.fence.owner(candidate)
            if owner is None or owner == self.fence.agent_id:
                owner = self.fence.held(candidate) if holders else None
            if owner is not None and owner != self.fence.agent_id and self.found is None:
                self.found = Reached(owner=owner, what=f"the path {what!r}")

    def value(self, value: str, *, holders: bool = False) -> None:
        """A shell word's value: a path, a pattern the shell expands, or text with paths in it."""
        for expanded in brace_expansions(value):
            if PLAIN.match(expanded):
                self.path(expanded, value, holders=holders)
            elif GLOB.match(expanded):
                self._glob(expanded, value, holders=holders)
            else:
                self.text(expanded)

    def text(self, text: str) -> None:
        """Text that is not one path (code, a whole line): every path-like token in it."""
        for token in _TOKEN.findall(text):
            self.value(token)

    def mentions(self, text: str) -> None:
        """A line only running resolves: another agent's folder named anywhere in it counts."""
        for pattern, owner in self.fence.names:
            found = pattern.search(text)
            if found is not None and self.found is None:
                self.found = Reached(owner=owner, what=f"the command names {found.group(0)!r}, which")

    def shell(self, analysis: CommandAnalysis) -> None:
        uncertain = analysis.unchecked is not None or analysis.changes_directory or "<<" in analysis.command
        for write in analysis.writes:
            if write.path is None:
                uncertain = True
            else:
                self.value(write.path)
        for part in analysis.parts:
            words, through = unwrapped(part.words)
            if not words:
                continue
            program = program_name(words[0].text)
            holders = program in REMOVERS
            for word in words:
                for value in argument_values(word.text):
                    self.value(value, holders=holders)
            uncertain = uncertain or "xargs" in through or program in _INTERPRETERS
            uncertain = uncertain or any(w.dynamic or w.ambiguous for w in words)
        self.text(analysis.command)  # input redirections, code, anything the parts missed
        if uncertain:
            self.mentions(analysis.command)

    def _glob(self, pattern: str, what: str, *, holders: bool) -> None:
        """What the shell would expand the pattern to now, and the folder it starts from."""
        head = _GLOB_CHARS.split(pattern, maxsplit=1)[0]
        self.path(os.path.dirname(head) or ".", what)  # `rm ./*` names what it matches, not `.`
        for candidate in path_candidates(pattern, self.workspace) or []:
            for match in islice(glob.iglob(candidate), _MAX_GLOB_MATCHES):
                self.path(match, what, holders=holders)
