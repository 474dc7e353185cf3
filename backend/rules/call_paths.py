"""The path-like parts of a tool call, shared by the checks that look at what a call may touch.

bootstrap_writes (which protected files a call may write) and agent_fence (whether a call may
reach another agent's workspace) read calls the same way: a file tool's path arguments; a shell
command cut by the rules' own parser (`analyse_command`), past its wrappers, each argument's
value (`of=...`, `--output=...`), with bash's brace expansion done. Each check then decides what
the values mean for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from backend.rules.shell_match import CommandAnalysis, analyse_command
from backend.rules.shell_parse import Word
from backend.rules.shell_wrappers import is_assignment, program_name, strip_wrapper

PATH_KEYS = frozenset(
    """path paths file files filename file_path filepath source sources destination target src dst
    dest from to old_path new_path source_path destination_path target_path""".split()
)
"""Argument names that hold a path in the tools this host knows (the file server's, and common ones)."""
REMOVERS = frozenset({"rm", "rmdir", "unlink", "shred", "mv", "rsync", "truncate"})
"""Programs that may remove or replace a whole folder: naming one counts for everything in it."""
PLAIN = re.compile(r"^[\w./~+@%,:-]+$")
"""A value that is a plain path, as written."""
GLOB = re.compile(r"^[\w./~+@%,:*?\[\]!-]+$")
"""A value that is a path pattern the shell expands."""
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_MAX_EXPANSIONS = 64


def path_arguments(arguments: object) -> list[str]:
    """The string values of a call's path-named arguments (a list's items too)."""
    if not isinstance(arguments, dict):
        return []
    found: list[str] = []
    for key, value in arguments.items():
        if str(key).lower() not in PATH_KEYS:
            continue
        values = value if isinstance(value, list) else [value]
        found += [v for v in values if isinstance(v, str)]
    return found


def unwrapped(words: Sequence[Word]) -> tuple[list[Word], list[str]]:
    """The command past its assignments and wrappers (`sudo`, `env`, `xargs`...), and the wrappers."""
    current = list(words)
    through: list[str] = []
    for _ in range(16):
        while current and is_assignment(current[0]):
            current = current[1:]
        stripped = strip_wrapper(current, strict=False) if current else None
        if stripped is None:
            break
        through.append(program_name(current[0].text))
        current = stripped
    return current, through


def argument_values(text: str) -> list[str]:
    """What an argument may name: itself, or the value of `of=...` / `--output=...`; not a flag."""
    key, equals, value = text.partition("=")
    if equals and PLAIN.match(key):
        return [value] if value else []
    if text.startswith("-") and (PLAIN.match(text) or GLOB.match(text)):
        return []
    return [text]


@lru_cache(maxsize=256)
def analysed(command: str) -> CommandAnalysis:
    """The parse, kept for a while: one call is looked at again (its answer, an edit, a new rule)."""
    return analyse_command(command)


def brace_expansions(value: str) -> list[str]:
    """`{AGENTS,SOUL}.md` -> both names, as bash expands them before the command sees them."""
    done: list[str] = []
    pending = [value]
    while pending and len(done) + len(pending) <= _MAX_EXPANSIONS:
        current = pending.pop()
        found = _BRACE.search(current)
        if found is None:
            done.append(current)
            continue
        head, tail = current[: found.start()], current[found.end() :]
        pending += [head + choice + tail for choice in found.group(1).split(",")]
    return done + pending
