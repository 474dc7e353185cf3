"""Bootstrap files are the agent's instructions, not its scratch space (issue 19).

AGENTS.md, SOUL.md, USER.md, TOOLS.md, MEMORY.md (and the memory server's memory/MEMORY.md) and
HEARTBEAT.md at the workspace root (and the data dir's copies of those the prompt and the
heartbeat fall back to) are what the agent is told at every run. A call of the
agent's own tools that may write one of them (bootstrap_writes says which) is put to a person
every time, with a reason that says in words that the agent is changing its own instructions,
whatever would otherwise allow it: allow rules, a tool's `always_allow` policy, "allow for this
session", `--approve all` and the auto-approve switch (neither answers such a question). A deny
still denies without asking. An answer meant to stand ("for this session", "always") counts as
once, and an edit that points an approved call at an instruction file the question did not name
refuses the call. The memory server keeps writing memory/MEMORY.md through its own tools.

The workspace's own host configuration counts as instructions too (issue 29, item 6): its
`overseer.yaml` (rules, servers, this very switch), `.mcp.json` (the servers Claude Code's engine
reads) and anything under `.overseer/skills/` (an always-on skill is in every prompt) or
`.overseer/modes/`; not `.overseer/spill/`, the host's own scratch for long tool output.

An admin relaxes this with `protect_bootstrap` in the config (false, or a list of files). That
lifts the question only. For the workspace's config and skills the real guard is the trust hash
(backend/workspace_trust.py): whatever was written, with or without a question, the next
`overseer run` and the next prompt leave a changed `overseer.yaml` or skill out until a person
trusts its new content, and no setting turns that off.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.domain.models import Approval, Decision
from backend.config import CONFIG_FILE_NAME
from backend.paths import BOOTSTRAP_FILES, HEARTBEAT_FILE, WORKSPACE_SKILLS_DIR
from backend.rules.bootstrap_writes import written_files
from backend.rules.narrow import narrow_rules_for
from backend.rules.policy_engine import Evaluation, ToolCallView
from shared.memory_files import MEMORY_DIR, MEMORY_FILE

MCP_JSON = ".mcp.json"
"""Claude Code's project servers file, read by the claude-sdk engine with `project` settings."""
WORKSPACE_MODES_DIR = ".overseer/modes"
"""A workspace's own modes: nothing reads them yet (modes are the built-ins and the data dir's),
guarded already so that a reader, when there is one, starts behind the question."""
CLAUDE_DIR = ".claude"
"""A pasted Claude Code project folder: its settings.json and the hook scripts it runs (issue 34)
decide what the agent may do, so the agent changing them is changing its own instructions."""
INSTRUCTION_FILES: tuple[str, ...] = (
    *BOOTSTRAP_FILES,
    MEMORY_FILE,
    f"{MEMORY_DIR}/{MEMORY_FILE}",
    HEARTBEAT_FILE,
    CONFIG_FILE_NAME,
    MCP_JSON,
    f"{WORKSPACE_SKILLS_DIR}/",
    f"{WORKSPACE_MODES_DIR}/",
    f"{CLAUDE_DIR}/",
)
"""Workspace-relative: the files protected unless the config's `protect_bootstrap` says otherwise.
A name ending in `/` is a folder: every file under it counts."""
CHANGE_PREFIX = "The agent wants to change its own instructions: "
"""How every such question's reason starts; the terminal and the dashboard recognise it by this."""
SOURCE = "protect_bootstrap"
FALLBACK_FILES = frozenset({*BOOTSTRAP_FILES, HEARTBEAT_FILE})
"""The files read from the data dir when the workspace has none (engine/turns/bootstrap.py, the heartbeat)."""


@dataclass(kw_only=True)
class InstructionChange(Evaluation):
    """An `ask` because the call may write the agent's own instruction files, named in `files`."""

    files: tuple[str, ...]


def is_instruction_change(approval: Approval) -> bool:
    """Whether an approval asks about the agent changing its own instructions."""
    return approval.kind == "tool" and approval.reason.startswith(CHANGE_PREFIX)


def change_reason(files: Sequence[str]) -> str:
    """The question's reason, in words (what the dashboard card and the terminal show)."""
    return (
        f"{CHANGE_PREFIX}{', '.join(files)}. Asked every time: allow rules, session allows and "
        "--approve all do not cover it, and an allow for the session or always counts as once "
        "(an admin can change this with protect_bootstrap in the config)."
    )


@dataclass(frozen=True)
class BootstrapGuard:
    """Finds calls that may write the protected files and makes each one ask (see the module doc)."""

    files: tuple[str, ...] = INSTRUCTION_FILES
    """Workspace-relative paths, and absolute ones outside any workspace (the data dir's); empty
    when an admin turned the protection off."""

    @classmethod
    def from_setting(cls, setting: bool | Sequence[str], *, data_dir: Path | None = None) -> BootstrapGuard:
        """The config's `protect_bootstrap`: true (the default files), false (none) or a list.

        With `data_dir`, its copies of the files the prompt and the heartbeat fall back to (when a
        workspace has none) are protected too: writing one changes every such agent's instructions.
        """
        if setting is False:
            return cls(files=())
        if setting is True:
            names = INSTRUCTION_FILES
        else:
            names = tuple(dict.fromkeys(_normalised(n) for n in setting))
        fallbacks = [str(data_dir / n) for n in names if data_dir is not None and n in FALLBACK_FILES]
        return cls(files=(*names, *fallbacks))

    def review(self, view: ToolCallView, evaluation: Evaluation) -> Evaluation:
        """The rules' verdict, made an `ask` that says why when the call may change a protected file."""
        if evaluation.verdict == "deny" or not self.files:
            return evaluation
        files = self.touched(view)
        if not files:
            return evaluation
        return InstructionChange(verdict="ask", reason=change_reason(files), source=SOURCE, files=files)

    def touched(self, view: ToolCallView) -> tuple[str, ...]:
        """The protected files (as configured) this call may write, in configured order."""
        return written_files(self.files, view)


def _normalised(name: str) -> str:
    # `./a//b/` is `a/b/`: a folder keeps the `/` that makes it one.
    return os.path.normpath(name) + ("/" if name.endswith("/") else "")


def recheck(asked: Evaluation, again: Evaluation, arguments: dict[str, object]) -> Evaluation:
    """The verdict on a call a person edited: refused if it now changes an instruction file the
    question did not name (it needs its own question; the edit must not become a silent write)."""
    if not isinstance(again, InstructionChange):
        return again
    if isinstance(asked, InstructionChange) and set(again.files) <= set(asked.files):
        return again
    shown = json.dumps(arguments, ensure_ascii=False)
    shown = shown if len(shown) <= 4000 else shown[:4000] + "…"
    reason = (
        f"the edited call would change the agent's own instructions ({', '.join(again.files)}), which "
        f"the question did not name; to ask for that, call the tool again with the edited arguments: {shown}"
    )
    return Evaluation(verdict="deny", reason=reason, source=SOURCE)


def as_once(evaluation: Evaluation, decision: Decision) -> Decision:
    """The answer applied to an instruction change: "for the session" or "always" counts as once.

    Treated as once rather than refused: the person did say yes to this call, and answers come
    through many doors (API clients, chat buttons) that may offer a standing allow; refusing would
    throw their yes away, while a standing allow would let the next change through unasked.
    """
    standing = decision.kind in ("allow_session", "allow_always")
    if not standing or not isinstance(evaluation, InstructionChange):
        return decision
    return decision.model_copy(update={"kind": "allow_once", "rules": None})


def suggested_rules(evaluation: Evaluation, view: ToolCallView) -> list[str]:
    """What "always allow" would write: nothing for an instruction change, which no rule may cover."""
    return [] if isinstance(evaluation, InstructionChange) else narrow_rules_for(view)
