"""Shell command specifiers (`Bash(...)`, `mcp__shell__exec(...)`) and the parts they are matched against."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from backend.rules.globbing import star_regex
from backend.rules.shell_parse import Word, fallback_commands, parse_shell
from backend.rules.shell_unknown import Unknown, find_unknowns, may_match
from backend.rules.shell_wrappers import (
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
from shared.home import TildeError, expand_home

MAX_ALLOW_LENGTH = 10_000
"""Longer commands are never approved by an allow rule."""
MAX_PARSE_LENGTH = 100_000
"""Longer commands get only the textual fallback for deny/ask checks."""
_MAX_DEPTH = 4  # how many `sh -c` layers are looked through
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
        if text.endswith((":*", " *")):
            prefix = text[:-2].rstrip()
            source = star_regex(prefix, escapes=True) + "(?: .*)?" if prefix else ".*"
        else:
            source = star_regex(text, escapes=True)
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
    """Guessed by the textual fallback of an unparseable line: checked against deny/ask rules only."""
    unknowns: tuple[Unknown, ...] = ()
    """What it runs that only the run decides (`$x v`, `... | sh`): deny/ask rules may match it."""


@dataclass(frozen=True, kw_only=True)
class RedirectWrite:
    """A file a redirection writes: checked like an Edit of that path."""

    raw: str
    path: str | None
    """The path as written (`~` expanded), or None when only running the command would tell."""


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
    """Parse and cut a command line once, for every rule to be matched against.

    Commands run on the line's behalf (`sh -c '...'`, `eval`, `find -exec`) are parts too, so
    deny rules see them and allow rules must cover them.
    """
    builder = _Builder()
    blocker = _allow_blocker(command)
    if len(command) > MAX_PARSE_LENGTH:
        builder.add_fallback(command, reason="too long to parse", depth=0)
    else:
        builder.add_line(command, depth=0, deny_only=False)
    if builder.unchecked is not None:
        blocker = blocker or f"could not be parsed ({builder.unchecked})"
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
        self.inline_code = False

    def add_line(self, command: str, *, depth: int, deny_only: bool) -> None:
        """Parse a command line (the whole one, or a string run by `sh -c`) into parts and writes."""
        syntax = parse_shell(command)
        if syntax.error is not None:
            self.add_fallback(command, reason=None if deny_only else syntax.error, depth=depth)
            return
        for simple in syntax.commands:
            self.add_command(simple.words, depth=depth, deny_only=deny_only)
        if not deny_only:
            self.writes.extend(RedirectWrite(raw=t.raw, path=_write_path(t)) for t in syntax.writes)

    def add_fallback(self, command: str, *, reason: str | None, depth: int) -> None:
        """Guessed parts for deny checks; `reason` marks the analysis unchecked (None: a bonus reading)."""
        self.unchecked = self.unchecked or reason
        for simple in fallback_commands(command):
            self.add_command(simple.words, depth=depth, deny_only=True)

    def add_command(self, words: Sequence[Word], *, depth: int, deny_only: bool) -> None:
        """Add one simple command, then whatever it runs on its behalf."""
        allow_forms, allow_words = _allow_forms(words)
        # Where two quote removals disagree, deny rules also get bashlex's reading, as a bonus.
        readings = [(list(words), deny_only)]
        if any(w.ambiguous for w in words):
            readings.append(
                ([replace(w, text=w.parser_text or w.text, parser_text=None) for w in words], True)
            )
        deny_forms: set[str] = set()
        stages: list[tuple[list[Word], bool]] = []
        unknowns: list[Unknown] = []
        for reading, bonus in readings:
            forms, reading_stages = _deny_forms(reading)
            deny_forms |= forms
            stages += [(stage, bonus) for stage in reading_stages]
            unknowns += find_unknowns(reading_stages)
        self.parts.append(
            CommandPart(
                text=_join_raw(words),
                allow_forms=allow_forms,
                deny_forms=frozenset(deny_forms),
                words=tuple(allow_words),
                deny_only=deny_only,
                unknowns=tuple(dict.fromkeys(unknowns)),
            )
        )
        seen: set[str] = set()
        for stage, bonus in stages:
            self.inline_code = self.inline_code or runs_inline_code([w.text for w in stage])
            for inner in inner_commands(stage):
                key = inner if isinstance(inner, str) else _join_raw(inner)
                if key in seen:
                    continue
                seen.add(key)
                if depth >= _MAX_DEPTH:
                    self.unchecked = self.unchecked or (None if bonus else "too many nested shells")
                elif isinstance(inner, str):
                    self.add_line(inner, depth=depth + 1, deny_only=bonus)
                else:
                    self.add_command(inner, depth=depth + 1, deny_only=bonus)


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


def _deny_forms(words: Sequence[Word]) -> tuple[set[str], list[list[Word]]]:
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
    return forms, stages


def _join_raw(words: Iterable[Word]) -> str:
    return " ".join(w.raw for w in words)


def _write_path(target: Word) -> str | None:
    text = target.text
    if target.dynamic or target.ambiguous or any(ch in text for ch in "*?["):
        return None  # expanded only when the command runs
    try:
        return expand_home(text)  # as bash reads `~` and `~/`
    except TildeError:
        return None  # ~user/...: fails closed


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


def unknown_match(pattern: ShellPattern, part: CommandPart) -> Unknown | None:
    """The first thing the part runs, known only at run time, that a deny/ask pattern may name."""
    return next((u for u in part.unknowns if may_match(pattern.text, u)), None)


def allow_match(pattern: ShellPattern, part: CommandPart) -> bool:
    """Whether an allow pattern matches a part (as written, or with safe prefixes removed)."""
    return any(pattern.matches(form) for form in part.allow_forms)
