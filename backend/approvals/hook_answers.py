"""What a hook handler's run means, read as Claude Code reads it.

Exit 0: stdout is parsed as JSON when it is a JSON object (`continue`/`stopReason`,
`decision`/`reason`, `hookSpecificOutput` with `permissionDecision`, `permissionDecisionReason`,
`updatedInput`, `additionalContext`, or PermissionRequest's `decision.behavior`), else it is
plain text (context for UserPromptSubmit and SessionStart). Exit 2: a block, stderr the reason.
Any other exit code, a timeout, a crash or an HTTP error: the hook failed, which the caller
reports, and which denies a PreToolUse call (fail closed, where Claude Code would go on).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from backend.approvals.hook_runner import HandlerRun

Permission = Literal["allow", "deny", "ask"]
_ORDER: dict[Permission, int] = {"deny": 3, "ask": 2, "allow": 1}


@dataclass(kw_only=True)
class HookAnswer:
    """One handler's answer."""

    principal: str
    blocked: bool = False
    """Exit 2, `decision: block`, `permissionDecision: deny`, `behavior: deny` or `continue: false`."""
    reason: str = ""
    permission: Permission | None = None
    updated_input: dict[str, Any] | None = None
    context: str = ""
    """`additionalContext`, or plain stdout on exit 0 (used where the event takes context)."""
    failure: str | None = None
    halted: bool = False
    """`continue: false`: stop, whatever else was said."""


def read_answer(run: HandlerRun) -> HookAnswer:
    """One handler's run as an answer (see the module doc)."""
    answer = HookAnswer(principal=run.principal)
    if run.failure is not None:
        answer.failure = run.failure
        return answer
    if run.exit_code == 2:
        answer.blocked = True
        answer.reason = run.stderr.strip() or "the hook exited with code 2"
        return answer
    if run.exit_code != 0:
        said = run.stderr.strip().splitlines()
        answer.failure = f"exit code {run.exit_code}" + (f": {said[-1]}" if said else "")
        return answer
    data = _json_object(run.stdout)
    if data is None:
        answer.context = run.stdout.strip()
        return answer
    _read_json(answer, data)
    return answer


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _read_json(answer: HookAnswer, data: dict[str, Any]) -> None:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = data.get("reason")
    if data.get("decision") == "block":
        answer.blocked = True
        answer.reason = str(reason or "blocked by a hook")
    elif data.get("decision") == "approve":  # PreToolUse's older spelling of allow
        answer.permission = "allow"
        answer.reason = str(reason or "")
    permission = specific.get("permissionDecision")
    if permission in _ORDER:
        answer.permission = permission
        answer.reason = str(specific.get("permissionDecisionReason") or answer.reason)
    behaviour = specific.get("decision")  # PermissionRequest: {behavior, updatedInput, message}
    if isinstance(behaviour, dict) and behaviour.get("behavior") in ("allow", "deny"):
        answer.permission = behaviour["behavior"]
        answer.reason = str(behaviour.get("message") or answer.reason)
        if isinstance(behaviour.get("updatedInput"), dict):
            answer.updated_input = behaviour["updatedInput"]
    if isinstance(specific.get("updatedInput"), dict):
        answer.updated_input = specific["updatedInput"]
    if specific.get("additionalContext"):
        answer.context = str(specific["additionalContext"])
    if answer.permission == "deny":
        answer.blocked = True
        answer.reason = answer.reason or "denied by a hook"
    if data.get("continue") is False:
        answer.blocked = answer.halted = True
        answer.reason = str(data.get("stopReason") or answer.reason or "a hook stopped the run")


@dataclass(kw_only=True)
class Verdict:
    """Every matching handler's answers to one event, as one."""

    answers: Sequence[HookAnswer] = ()
    fail_closed: bool = False
    """A failed handler blocks (PreToolUse)."""

    @property
    def failures(self) -> list[HookAnswer]:
        return [a for a in self.answers if a.failure is not None]

    @property
    def blocking(self) -> list[HookAnswer]:
        """Answers that block: a block, and (failing closed) a failure."""
        return [a for a in self.answers if a.blocked or (self.fail_closed and a.failure is not None)]

    @property
    def blocked(self) -> bool:
        return bool(self.blocking)

    @property
    def reason(self) -> str:
        """Why it is blocked, or asks: each blocking hook's reason (a failure says which hook)."""
        said = [a.reason if a.failure is None else f"{a.principal} failed ({a.failure})" for a in self.blocking]
        if not said:
            said = [a.reason for a in self.answers if a.permission == self.permission and a.reason]
        return "; ".join(s for s in said if s)

    @property
    def permission(self) -> Permission | None:
        """deny > ask > allow, as Claude Code orders them; None when no hook said."""
        if self.blocked:
            return "deny"
        said = [a.permission for a in self.answers if a.permission is not None]
        return max(said, key=lambda p: _ORDER[p]) if said else None

    @property
    def deciders(self) -> list[str]:
        """The hooks whose answer is the verdict's permission."""
        if self.blocked:
            return [a.principal for a in self.blocking]
        return [a.principal for a in self.answers if a.permission == self.permission]

    @property
    def updated_input(self) -> dict[str, Any] | None:
        """The first `updatedInput`, in the order the hooks are configured."""
        return next((a.updated_input for a in self.answers if a.updated_input is not None), None)

    @property
    def context(self) -> str:
        return "\n".join(a.context for a in self.answers if a.context)
