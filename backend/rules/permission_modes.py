"""What Claude Code's `permissions.defaultMode` means in Overseer (issue 35, item 11).

A pasted `.claude/settings.json` block often sets a mode. Each one Overseer can honour safely is
mapped onto what already exists here, so nothing new can loosen a decision:

- `default`: as without it (reads follow `read_only_auto_allow`, the rest asks).
- `acceptEdits`: file writes and edits inside a session's workspace are allowed, by the allow
  rule `Edit(./**)` (source `defaultMode acceptEdits`). Like any allow rule it comes after the
  managed policy's rules and every deny and ask rule, and the instruction files still ask
  (backend/rules/bootstrap_guard.py). Claude Code also lets a few filesystem commands (mkdir,
  mv, ...) run; here commands still ask. When the managed policy sets `disable_auto_approve`,
  the mode is not applied (edits ask), and the start says so.
- `plan`: new sessions start in the plan mode (an agent's own `mode` or a request's still wins).

`auto`, `dontAsk` and `bypassPermissions` are refused when the config is read (backend/config.py).
`additionalDirectories` becomes more `workspace_roots` (`Settings.all_workspace_roots`).
"""

from __future__ import annotations

import logging

from backend.rules.grammar import RuleSet
from backend.rules.managed import NO_MANAGED_POLICY, ManagedPolicy

log = logging.getLogger(__name__)

ACCEPT_EDITS_RULE = "Edit(./**)"
"""The allow rule `acceptEdits` stands for: the file server's writes inside the workspace."""

ACCEPT_EDITS_SOURCE = "defaultMode acceptEdits"


def mode_rules(mode: str | None, managed: ManagedPolicy = NO_MANAGED_POLICY) -> RuleSet:
    """The rules `mode` adds to the config's own (none for most modes)."""
    if mode != "acceptEdits":
        return RuleSet()
    if managed.disable_auto_approve:
        log.warning(
            "permissions.defaultMode acceptEdits not applied (file edits ask): %s",
            managed.where("disable_auto_approve"),
        )
        return RuleSet()
    return RuleSet.from_config({"allow": [ACCEPT_EDITS_RULE]}, source=ACCEPT_EDITS_SOURCE)


def session_mode(mode: str | None) -> str:
    """The mode a new session starts in when neither the request nor its agent names one."""
    return "plan" if mode == "plan" else "agent"
