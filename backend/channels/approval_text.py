"""An approval as a short text for a chat or a push notification, and its outcome in one line.

Shared by Telegram and the push channels: the tool, the command or the diff (trimmed to fit),
why it asks, and, once closed, who answered how.
"""

from __future__ import annotations

import json
from typing import Any

from backend.domain.models import Approval

BODY_LIMIT = 3000
"""Characters of arguments shown; Telegram allows 4096 per message, the rest is the frame."""

DECISION_WORDS: dict[str, str] = {
    "allow_once": "Allowed once",
    "allow_session": "Allowed for this session",
    "allow_always": "Always allowed",
    "deny": "Denied",
    "cancel": "Cancelled",
}


def trimmed(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[: limit - 40].rstrip() + f"\n... ({len(text) - limit + 40} more characters)"


def tool_label(name: str) -> str:
    """`mcp__shell__exec` as `shell › exec`; other names as they are."""
    parts = name.split("__")
    return " › ".join(parts[1:]) if len(parts) >= 3 and parts[0] == "mcp" else name


def arguments_text(arguments: dict[str, Any]) -> str:
    """What the call would do, the way a person reads it: the command, the diff, the file, else JSON."""
    if isinstance(arguments.get("command"), str):
        return "$ " + arguments["command"]
    path = arguments.get("path") or arguments.get("file_path")
    old, new = arguments.get("old_string", arguments.get("old")), arguments.get("new_string", arguments.get("new"))
    if isinstance(path, str) and isinstance(old, str) and isinstance(new, str):
        diff = "\n".join([*("- " + line for line in old.splitlines()), *("+ " + line for line in new.splitlines())])
        return f"{path}\n{diff}"
    if isinstance(path, str) and isinstance(arguments.get("content"), str):
        return f"{path}\n{arguments['content']}"
    return json.dumps(arguments, indent=1, ensure_ascii=False, default=str)


def approval_text(approval: Approval, *, title: str | None = None) -> str:
    """The question: what waits, in which session, and why."""
    what = {
        "tool": f"Tool: {tool_label(approval.tool_name)}",
        "mode_switch": "Switch to the next mode",
        "workflow_step": "Start the next workflow step",
        "elicitation": "A server asks you something",
        "sampling": "A server asks to run the model",
        "network": "A command wants to connect to a host off the sandbox's allowlist",
        "unconfined": "A command asks to run OUTSIDE the sandbox (allowed once at a time)",
    }[approval.kind]
    lines = [f"Approval needed{f' in {title!r}' if title else ''}", what]
    if approval.kind == "elicitation":
        body = str(approval.arguments.get("message", ""))
    else:
        body = arguments_text(approval.arguments)
    lines.append(trimmed(body, BODY_LIMIT))
    if approval.reason:
        lines.append(f"Why: {trimmed(approval.reason, 200)}")
    return "\n".join(lines)


def outcome_text(approval: Approval) -> str:
    """One line for a closed approval: what was decided, by whom and through which door."""
    decision = approval.decision
    if approval.status == "expired":
        line = "Expired: nobody answered in time, so it was denied"
    elif approval.status == "cancelled" and approval.decided_by == "stop":
        line = "Withdrawn" + (f": {decision.message}" if decision and decision.message else "")
    else:
        line = DECISION_WORDS.get(decision.kind, approval.status) if decision else approval.status
    if approval.decider is not None and approval.decider.kind != "system":
        line += f" by {approval.decider.name} (via {approval.decider.via})"
    if decision and decision.message and approval.status == "denied":
        line += f": {trimmed(decision.message, 300)}"
    return line
