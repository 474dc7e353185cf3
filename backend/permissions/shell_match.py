"""Shell command specifiers (`Bash(...)`, `mcp__shell__exec(...)`) and the parts they are matched against."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from backend.permissions.globbing import star_regex
from backend.permissions.shell_parse import Word, fallback_commands, parse_shell
from backend.permissions.shell_wrappers import (
    SAFE_ENV_VARS,
    assignment_name,
    changes_directory,
    inner_commands,
    is_assignment,
    program_name,
    runs_inline_code,
    strip_git_globals,
    strip_wrapper,
)

MAX_ALLOW_LENGTH = 10_000
"""Longer commands are never approved by an allow rule."""
MAX_PARSE_LENGTH = 100_000
"""Longer commands get only the textual fallback for deny/ask checks."""
_MAX_DEPTH = 4  # how many `sh -c` layers deny checks look through
_MAX_STAGES = 16  # wrappers peeled from one command

_INVISIBLE_CODEPOINTS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800})


@dataclass(frozen=True)
class ShellPattern:
    """A command pattern: `*` matches any characters, `\\*` a literal star.

    No `*` means an exact match. A trailing ` *` or `:*` also matches the bare prefix, at a
    word boundary: `ls *` matches `ls` and `ls -la`, not `lsof`.
    """

    text: str
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        text = self.text
        prefix: str | None = None
        if text.endswith((":*", " *")):
            prefix = text[:-2]
        if prefix is None:
            source = star_regex(text, escapes=True)
        elif not prefix.strip():
            source = ".*"
        else:
            source = star_regex(prefix.rstrip(), escapes=True) + "(?: .*)?"
        object.__setattr__(self, "_regex", re.compile(source, re.DOTALL))

    @classmethod
    def parse(cls, specifier: str) -> ShellPattern:
        """Parse the text inside `Bash(...)`; ValueError when empty."""
        text = specifier.strip()
        if not text:
            raise ValueError("empty command pattern")
        return cls(text)

    def matches(self, form: str) -> bool:
        """Whether one form of a command part matches the whole pattern."""
        return self._regex.fullmatch(form) is not None


def escape_pattern(command: str) -> str:
    """A pattern matching exactly `command` (stars and backslashes escaped)."""
    return command.replace("\\", "\\\\").replace("*", "\\*")


@dataclass(frozen=True, kw_only=True)
class CommandPart:
    """One simple command of a command line, in the forms rules are matched against."""

    text: str
    """The command as written, words joined by one space."""
    allow_forms: tuple[str, ...]
    """An allow rule matches if it matches any of these (the last has safe `VAR=` and wrappers removed)."""
    deny_forms: frozenset[str]
    """A deny or ask rule matches if it matches any of these (hardened: unquoted, normalised)."""
    words: tuple[Word, ...]
    """The words of the last allow form."""
    deny_only: bool = False
    """Found by looking through `sh -c`/`eval` or by the textual fallback: never needs an allow."""


@dataclass(frozen=True, kw_only=True)
class RedirectWrite:
    """A file a redirection writes: checked like an Edit of that path."""

    raw: str
    path: str | None
    """The path as written (`~` expanded), or None when only running the command would tell."""
    deny_only: bool = False


@dataclass(frozen=True, kw_only=True)
class CommandAnalysis:
    """A command line cut into parts and writes, with what limits the checks."""

    command: str
    parts: tuple[CommandPart, ...]
    writes: tuple[RedirectWrite, ...]
    allow_blocker: str | None
    """Why no allow rule may approve this command (unparseable, too long, invisible characters)."""
    unchecked: str | None
    """Why deny/ask checks were best-effort (the parser refused some of it)."""
    changes_directory: bool
    inline_code: bool
    """Some part hands an interpreter inline code (`python -c`, `bash -c`, `node -e`)."""


def analyse_command(command: str) -> CommandAnalysis:
    """Parse and cut a command line once, for every rule to be matched against."""
    builder = _Builder()
    blocker = _allow_blocker(command)
    if len(command) > MAX_PARSE_LENGTH:
        builder.add_fallback(command, reason="too long to parse", depth=0)
    else:
        builder.add_line(command, deny_only=False, depth=0)
    if builder.top_level_error is not None:
        blocker = blocker or f"could not be parsed ({builder.top_level_error})"
    return CommandAnalysis(
        command=command,
        parts=tuple(builder.parts),
        writes=tuple(builder.writes),
        allow_blocker=blocker,
        unchecked=builder.unchecked,
        changes_directory=any(changes_directory([w.text for w in p.words]) for p in builder.parts),
        inline_code=builder.inline_code,
    )


class _Builder:
    def __init__(self) -> None:
        self.parts: list[CommandPart] = []
        self.writes: list[RedirectWrite] = []
        self.unchecked: str | None = None
        self.top_level_error: str | None = None
        self.inline_code = False

    def add_line(self, command: str, *, deny_only: bool, depth: int) -> None:
        syntax = parse_shell(command)
        if syntax.error is not None:
            if depth == 0:
                self.top_level_error = syntax.error
            self.add_fallback(command, reason=syntax.error, depth=depth)
            return
        for simple in syntax.commands:
            self.add_command(simple.words, deny_only=deny_only, depth=depth)
        for target in syntax.writes:
            self.writes.append(RedirectWrite(raw=target.raw, path=_write_path(target), deny_only=deny_only))

    def add_fallback(self, command: str, *, reason: str, depth: int) -> None:
        self.unchecked = self.unchecked or reason
        for simple in fallback_commands(command):
            self.add_command(simple.words, deny_only=True, depth=depth)

    def add_command(self, words: Sequence[Word], *, deny_only: bool, depth: int) -> None:
        allow_forms, allow_words = _allow_forms(words)
        deny_forms, stages = _deny_forms(words)
        self.parts.append(
            CommandPart(
                text=_join_raw(words),
                allow_forms=allow_forms,
                deny_forms=deny_forms,
                words=tuple(allow_words),
                deny_only=deny_only,
            )
        )
        for stage in stages:
            texts = [w.text for w in stage]
            self.inline_code = self.inline_code or runs_inline_code(texts)
            for inner in inner_commands(stage):
                if depth >= _MAX_DEPTH:
                    self.unchecked = self.unchecked or "too many nested shells"
                elif isinstance(inner, str):
                    self.add_line(inner, deny_only=True, depth=depth + 1)
                else:
                    self.add_command(inner, deny_only=True, depth=depth + 1)


def _allow_forms(words: Sequence[Word]) -> tuple[tuple[str, ...], list[Word]]:
    forms = [_join_raw(words)]
    current = list(words)
    while current and current[0].assignment and assignment_name(current[0]) in SAFE_ENV_VARS:
        current = current[1:]
    forms.append(_join_raw(current))
    for _ in range(_MAX_STAGES):
        stripped = strip_wrapper(current, strict=True)
        if stripped is None:
            break
        current = stripped
        forms.append(_join_raw(current))
    return tuple(dict.fromkeys(forms)), current


def _deny_forms(words: Sequence[Word]) -> tuple[frozenset[str], list[list[Word]]]:
    """Every reading of the command a deny rule should see, and each wrapper-peeled stage."""
    forms = {_join_raw(words), " ".join(w.text for w in words)}
    stages: list[list[Word]] = []
    current: list[Word] | None = list(words)
    for _ in range(_MAX_STAGES):
        if current is None:
            break
        while current and is_assignment(current[0]):
            current = current[1:]
        if not current:
            break
        stages.append(current)
        texts = [w.text for w in current]
        normalised = [program_name(texts[0]), *texts[1:]]
        forms.update({_join_raw(current), " ".join(texts), " ".join(normalised)})
        git = strip_git_globals(normalised)
        if git is not None:
            forms.add(" ".join(git))
        current = strip_wrapper(current, strict=False)
    return frozenset(forms), stages


def _join_raw(words: Iterable[Word]) -> str:
    return " ".join(w.raw for w in words)


def _write_path(target: Word) -> str | None:
    text = target.text
    if target.dynamic or any(ch in text for ch in "*?["):
        return None  # expanded only when the command runs
    if text == "~" or text.startswith("~/"):
        return str(Path.home()) + text[1:]
    if text.startswith("~"):
        return None  # ~user/...
    return text


def _allow_blocker(command: str) -> str | None:
    if len(command) > MAX_ALLOW_LENGTH:
        return f"longer than {MAX_ALLOW_LENGTH:,} characters"
    for ch in command:
        if _is_invisible(ch):
            return f"holds an invisible character U+{ord(ch):04X}"
    return None


def _is_invisible(ch: str) -> bool:
    if ch in "\t\n":
        return False
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp") or (category == "Zs" and ch != " "):
        return True
    code = ord(ch)
    return code in _INVISIBLE_CODEPOINTS or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


def deny_match(pattern: ShellPattern, part: CommandPart) -> bool:
    """Whether a deny/ask pattern matches any hardened form of a part."""
    return any(pattern.matches(form) for form in part.deny_forms)


def allow_match(pattern: ShellPattern, part: CommandPart) -> bool:
    """Whether an allow pattern matches a part (as written, or with safe prefixes removed)."""
    return any(pattern.matches(form) for form in part.allow_forms)

