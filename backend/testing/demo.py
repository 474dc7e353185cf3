"""The offline demo: what a newcomer sees when no model is configured.

The scripted "model" lists the workspace, writes `notes.txt` (which the default policy sends for
approval), counts its lines in the shell and sums up, quoting the shell's answer. Each reply is a
function of the conversation so far, not of a counter: the next step follows from how many tool
results came back since the person's last prompt and what the last one says. So it works for any
number of turns, starts over on a new prompt, and stops with an explanation when a step is denied
or fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from backend.testing.script import ModelRequest, Reply, ScriptedToolCall, SeenToolResult

LIST_DIR = "mcp__file__list_dir"
WRITE_FILE = "mcp__file__write_file"
SHELL_EXEC = "mcp__shell__exec"
NOTES_FILE = "notes.txt"

# How a denial reads in a tool result. Claude Code also flags it `is_error`; the LiteLLM path
# carries only text, so the words are what we can go by.
_DENIAL = re.compile(r"\b(denied|deny|rejected|declined|not approved|refused)\b", re.IGNORECASE)
_FAILURE = re.compile(r"^\W*error\b", re.IGNORECASE)


def _went_wrong(result: SeenToolResult) -> bool:
    return result.is_error or bool(_DENIAL.search(result.text) or _FAILURE.match(result.text))


@dataclass(kw_only=True)
class _Step:
    tool: str
    doing: str
    """What the step does, as the summary and a denial message phrase it."""


_STEPS = [
    _Step(tool=LIST_DIR, doing="listing the workspace"),
    _Step(tool=WRITE_FILE, doing=f"writing {NOTES_FILE}"),
    _Step(tool=SHELL_EXEC, doing=f"running `wc -l {NOTES_FILE}`"),
]


def demo_script(workspace_hint: str = "") -> Callable[[ModelRequest], Reply]:
    """The demo as a reply function for `ScriptedModelServer(demo_script(...))`.

    `workspace_hint` names the workspace in what the demo says and writes (e.g. its folder name).
    """
    where = " ".join(workspace_hint.split()) or "the workspace"

    def next_turn(request: ModelRequest) -> Reply:
        results = request.tool_results(since_prompt=True)
        done = len(results)
        if results and _went_wrong(results[-1]):
            return Reply(text=_stopped_text(_STEPS[min(done, len(_STEPS)) - 1], results[-1]))
        if done >= len(_STEPS):
            return Reply(text=_summary_text(where, results))
        step = _STEPS[done]
        tool = _offered_name(request, step.tool)
        if tool is None:
            return Reply(
                text=f"This demo needs the tool `{step.tool}` for {step.doing}, but this session does not "
                "offer it, so I stopped here."
            )
        if step.tool == LIST_DIR:
            return Reply(
                text=f"No model is configured, so this is Overseer's offline demo. First, a look at {where}.",
                tool_calls=[ScriptedToolCall(name=tool, arguments={"path": "."})],
            )
        if step.tool == WRITE_FILE:
            return Reply(
                text=f"Next I'll write {NOTES_FILE}. Writing a file needs your approval, so Overseer asks.",
                tool_calls=[
                    ScriptedToolCall(
                        name=tool, arguments={"path": NOTES_FILE, "content": _notes(where, results[0].text)}
                    )
                ],
            )
        return Reply(
            text="Now let me check the file from the shell.",
            tool_calls=[ScriptedToolCall(name=tool, arguments={"command": f"wc -l {NOTES_FILE}"})],
        )

    return next_turn


def _offered_name(request: ModelRequest, wanted: str) -> str | None:
    """The offered tool for `wanted`: that exact name, else one with the same tool part (a host may
    proxy tools under another server name, e.g. `mcp__overseer__list_dir`)."""
    if wanted in request.tool_names:
        return wanted
    suffix = "__" + wanted.rsplit("__", 1)[-1]
    return next((name for name in request.tool_names if name.endswith(suffix)), None)


def _entry_count(listing: str) -> int:
    """How many entries a directory listing shows: a JSON list (or `{"entries": [...]}`), else lines."""
    try:
        parsed = json.loads(listing)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        parsed = parsed.get("entries")
    if isinstance(parsed, list):
        return len(parsed)
    # The file server says "(empty directory ...)" rather than listing nothing.
    return sum(1 for line in listing.splitlines() if line.strip() and not line.startswith("("))


def _entries(listing: str) -> str:
    count = _entry_count(listing)
    return f"{count} entry" if count == 1 else f"{count} entries"


def _notes(where: str, listing: str) -> str:
    # Exactly three lines, so the summary can say what `wc -l` should have printed.
    return (
        "Notes written by Overseer's offline demo.\n"
        f"Workspace: {where}\n"
        f"It held {_entries(listing)} when I looked.\n"
    )


def _quote(text: str, limit: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


def _summary_text(where: str, results: list[SeenToolResult]) -> str:
    shell = _quote(results[2].text) or "(no output)"
    return (
        f"Done. I listed {where} ({_entries(results[0].text)}), wrote {NOTES_FILE} after your "
        f"approval, and ran `wc -l {NOTES_FILE}`, which printed:\n\n{shell}\n\n"
        "That was the offline demo; configure a model to have a real one do the work."
    )


def _stopped_text(step: _Step, result: SeenToolResult) -> str:
    said = _quote(result.text)
    if _DENIAL.search(said):
        return (
            f"The step {step.doing} was denied ({said}), so I stopped there and did nothing further. "
            "That is how approvals work: nothing runs without your say-so."
        )
    return f"The step {step.doing} failed ({said}), so I stopped there."
