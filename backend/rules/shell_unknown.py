"""Commands whose program is decided only when they run, and whether a deny pattern may name them.

`x=rm; $x v`, `$(echo rm) v`, `printf 'rm v' | sh`, `find . -delete`: no reading of the text says
what runs, so a deny or ask rule that names a command must assume it might (fail closed). A
command is read as a template whose unknown pieces are holes, and a pattern "may match" when some
filling of the holes matches it. That keeps `echo $HOME` clear of `Bash(rm *)` while `$x v` and
`git $sub origin` are caught by `Bash(rm *)` and `Bash(git push *)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from backend.rules.shell_parse import Word
from backend.rules.shell_wrappers import SHELLS, WRAPPERS, program_name, strip_wrapper


@dataclass(frozen=True)
class Hole:
    """An unknown piece of text: `any` (an expansion: may split, vanish, hold `/`) or `name`
    (a pathname glob: never holds `/`)."""

    kind: Literal["any", "name"]


ANY = Hole("any")
NAME = Hole("name")
Template = tuple[str | Hole, ...]

MAX_TEMPLATE = 4_000
"""Longer commands are not compared piece by piece: they may match any pattern."""

_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"\[[^\]]*\]|[*?]")
_STDIN_PATHS = ("-", "/dev/stdin")
_STDIN_PREFIXES = ("/dev/fd/", "/proc/")
_SOURCES = frozenset({"source", "."})
_DELETERS = ("rm", "rmdir", "unlink")


@dataclass(frozen=True)
class Unknown:
    """Part of a command that runs something only the run decides."""

    reason: str
    templates: tuple[Template, ...]
    """What the command may turn out to be; a pattern intersecting any of them may match."""


_ANYTHING: tuple[Template, ...] = ((ANY,),)


def find_unknowns(stages: Sequence[Sequence[Word]]) -> list[Unknown]:
    """The unknowns of one simple command, given its wrapper-peeled stages (`sudo x`, then `x`)."""
    found: list[Unknown] = []
    for index, stage in enumerate(stages):
        if not stage:
            continue
        feeder = stages[index - 1] if index else None
        xargs = feeder is not None and program_name(feeder[0].text) == "xargs"
        found += _stage_unknowns(stage, xargs_replace=_replace_string(feeder) if xargs else None, xargs=xargs)
    return found


def may_match(pattern_text: str, unknown: Unknown) -> bool:
    """Whether some filling of the unknown's holes matches the shell pattern `pattern_text`."""
    if any(len(t) > MAX_TEMPLATE for t in unknown.templates):
        return True
    patterns = pattern_templates(pattern_text)
    return any(_intersects(p, t) for p in patterns for t in unknown.templates)


def unknown_word(word: Word) -> bool:
    """Whether the shell decides this word's text only when it runs (expansion, glob, brace)."""
    return _is_expansion(word) or _BRACE.search(word.raw) is not None or _GLOB.search(word.text) is not None


def _stage_unknowns(stage: Sequence[Word], *, xargs_replace: str | None, xargs: bool) -> list[Unknown]:
    found: list[Unknown] = []
    unknown = next((w for w in stage if unknown_word(w)), None)
    if unknown is not None:
        found.append(Unknown(f"`{unknown.raw}` is known only when it runs", _templates(stage)))
    if unknown is stage[0]:
        return found  # the program itself is unknown: nothing more to tell about it
    texts = [w.text for w in stage]
    program = program_name(texts[0])
    reason: str | None = None
    if program in SHELLS:
        reason = _shell_input(stage)
    elif program in _SOURCES:
        operand = stage[1] if len(stage) > 1 else None
        if operand is None or _is_expansion(operand) or _reads_stdin(operand.text):
            reason = f"{program} reads commands from a source known only when it runs"
    elif program == "eval" and any(_is_expansion(w) for w in stage[1:]):
        reason = "eval runs text known only when it runs"
    elif program == "find" and "-delete" in texts:
        found.append(Unknown("find -delete removes files as rm does", tuple((*d, " ", ANY) for d in _DELETERS)))
    if xargs and reason is None:
        if xargs_replace is not None and any(xargs_replace in t for t in texts):
            if xargs_replace in texts[0] or program in SHELLS | _SOURCES | {"eval"}:
                reason = f"xargs puts its input into the command at {xargs_replace}"
        elif program in WRAPPERS and strip_wrapper(stage, strict=False) is None:
            reason = f"xargs adds the command {program} runs from its input"
    if reason is not None:
        found.append(Unknown(reason, _ANYTHING))
    return found


def _shell_input(stage: Sequence[Word]) -> str | None:
    """Why a shell's commands are unknown: it reads a pipe, a here-document, or added arguments."""
    name = program_name(stage[0].text)
    i, has_c, has_s = 1, False, False
    while i < len(stage):
        text = stage[i].text
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if text == "--":
            i += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if not text.startswith("--"):
            has_c = has_c or "c" in text[1:]
            has_s = has_s or "s" in text[1:]
        i += 1
    operand = stage[i] if i < len(stage) else None
    if has_c:
        if operand is None:
            return f"{name} -c takes its code from arguments added when it runs"
        return f"{name} -c runs code known only when it runs" if _is_expansion(operand) else None
    if has_s or operand is None or _reads_stdin(operand.text):
        return f"{name} reads its commands from standard input"
    if _is_expansion(operand):
        return f"{name} runs a script named only when it runs"
    return None  # a script file: what it holds is the file's business, as for `python x.py`


def _replace_string(xargs: Sequence[Word]) -> str | None:
    """xargs' replace string (`-I R`, `-iR`, `--replace[=R]`), or None when it appends its input."""
    texts = [w.text for w in xargs]
    for i, text in enumerate(texts[1:], start=1):
        if text == "-I" and i + 1 < len(texts):
            return texts[i + 1]
        if text.startswith("-I") and len(text) > 2:
            return text[2:]
        if text.startswith("-i") or text.startswith("--replace"):
            value = text[2:] if text.startswith("-i") else text.partition("=")[2]
            return value or "{}"
        if not text.startswith("-"):
            break
    return None


def _is_expansion(word: Word) -> bool:
    if word.dynamic or word.ambiguous:
        return True
    # The textual fallback knows no quoting: a `$` or backtick there may expand.
    return word.raw == word.text and ("$" in word.text or "`" in word.text)


def _reads_stdin(path: str) -> bool:
    return path in _STDIN_PATHS or path.startswith(_STDIN_PREFIXES)


def _templates(stage: Sequence[Word]) -> tuple[Template, ...]:
    """The stage as written and with its program's directory removed, holes for unknown words."""
    first = stage[0]
    variants = [list(stage)]
    if not _is_expansion(first) and not _BRACE.search(first.raw) and program_name(first.text) != first.text:
        variants.append([Word(first.raw, program_name(first.text)), *stage[1:]])
    return tuple(_template(words) for words in variants)


def _template(words: Sequence[Word]) -> Template:
    pieces: list[str | Hole] = []
    for index, word in enumerate(words):
        if _is_expansion(word) or _BRACE.search(word.raw):
            # An expansion may split into words or vanish, taking its neighbours' spaces along.
            if pieces and pieces[-1] == " ":
                pieces.pop()
            pieces.append(ANY)
            continue
        if index and pieces[-1] != ANY:
            pieces.append(" ")
        pieces += _glob_pieces(word.text)
    return tuple(pieces)


def _glob_pieces(text: str) -> list[str | Hole]:
    pieces: list[str | Hole] = []
    last = 0
    for found in _GLOB.finditer(text):
        pieces += list(text[last : found.start()])
        pieces.append(NAME)
        last = found.end()
    return pieces + list(text[last:])


@lru_cache(maxsize=512)
def pattern_templates(text: str) -> tuple[Template, ...]:
    """A shell pattern as templates: `*` is a hole; a trailing ` *` or `:*` also allows the bare prefix."""
    if text.endswith((":*", " *")):
        prefix = text[:-2].rstrip()
        if not prefix:
            return _ANYTHING
        head = _pattern_pieces(prefix)
        return (head, (*head, " ", ANY))
    return (_pattern_pieces(text),)


def _pattern_pieces(text: str) -> Template:
    pieces: list[str | Hole] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "*\\":
            pieces.append(text[i + 1])
            i += 2
            continue
        pieces.append(ANY if ch == "*" else ch)
        i += 1
    return tuple(pieces)


def _intersects(a: Template, b: Template) -> bool:
    """Whether one text fits both templates: a walk over pairs of positions (two star-only NFAs)."""
    stack, seen = [(0, 0)], set()
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j = state
        if i == len(a) and j == len(b):
            return True
        x = a[i] if i < len(a) else None
        y = b[j] if j < len(b) else None
        if isinstance(x, Hole):
            stack.append((i + 1, j))  # the hole stays empty
        if isinstance(y, Hole):
            stack.append((i, j + 1))
        if x is None or y is None:
            continue
        if isinstance(x, Hole) and isinstance(y, str):
            if _fills(x, y):
                stack.append((i, j + 1))
        elif isinstance(y, Hole) and isinstance(x, str):
            if _fills(y, x):
                stack.append((i + 1, j))
        elif x == y and isinstance(x, str):
            stack.append((i + 1, j + 1))
    return False


def _fills(hole: Hole, ch: str) -> bool:
    return hole.kind == "any" or ch != "/"
