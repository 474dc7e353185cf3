"""Real hook commands for the hook tests, written into a workspace's .claude/hooks/ (where
Claude Code projects keep them, and inside the sandbox the hooks run in)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_READ = 'import json, sys\nevent = json.load(sys.stdin)\n'

LINTER = _READ + """
command = event["tool_input"]["command"]
if command.startswith("rm "):
    print("rm is not allowed here: move files to ./trash instead", file=sys.stderr)
    sys.exit(2)
"""
"""PreToolUse on Bash: blocks `rm` with exit 2, stderr the reason."""

REWRITER = _READ + """
command = event["tool_input"]["command"]
print(json.dumps({"hookSpecificOutput": {
    "hookEventName": "PreToolUse",
    "permissionDecision": "allow",
    "permissionDecisionReason": "echo is harmless",
    "updatedInput": {"command": command.replace("hello", "rewritten")},
}}))
"""
"""PreToolUse on Bash: allows, with `hello` rewritten to `rewritten` (updatedInput)."""

ALLOW_ALL = _READ + """
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}))
"""

LOGGER = _READ + """
import os
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "tool-log.jsonl"), "a") as log:
    log.write(json.dumps({"tool": event["tool_name"], "input": event["tool_input"],
                          "output": event["tool_response"]["output"]}) + "\\n")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "logged by the hook"}}))
"""
"""PostToolUse: appends each call to tool-log.jsonl and adds context to the result."""

STOP_ONCE = _READ + """
import os
marker = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "stop-hook-seen.jsonl")
with open(marker, "a") as seen:
    seen.write(json.dumps({"active": event["stop_hook_active"], "last": event["last_assistant_message"]}) + "\\n")
if not event["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "write DONE.txt before you stop"}))
"""
"""Stop: blocks the first stop of a run with a reason, lets the next one through."""

SLOW = "import time\ntime.sleep(30)\n"
CRASH = "raise SystemExit('the hook crashed')\n"


def install(workspace: Path, name: str, body: str) -> str:
    """Write a Python hook into `workspace/.claude/hooks/`; the command that runs it."""
    path = workspace / ".claude" / "hooks" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/python3\n" + body)
    path.chmod(0o755)
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{name}.py'


def hooks_block(**events: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """`{Event: [(matcher, handlers)]}` as Claude Code's settings.json spells it."""
    return {event: [{"matcher": m, "hooks": hs} for m, hs in groups] for event, groups in events.items()}


def command(cmd: str, timeout: float | None = None) -> dict[str, Any]:
    return {"type": "command", "command": cmd, **({"timeout": timeout} if timeout is not None else {})}
