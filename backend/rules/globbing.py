"""Star-only globs: `*` is the one wildcard in tool names, parameter values and shell patterns."""

from __future__ import annotations

import re


def star_regex(pattern: str, *, star: str = ".*", escapes: bool = False) -> str:
    """Regex source for `pattern` where `*` becomes `star` and everything else is literal.

    With `escapes`, `\\*` is a literal star and `\\\\` a literal backslash; any other backslash
    stays literal, so pasted commands holding backslashes keep their meaning.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escapes and ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(star if ch == "*" else re.escape(ch))
        i += 1
    return "".join(out)


def compile_star(pattern: str, *, star: str = ".*", flags: int = re.DOTALL) -> re.Pattern[str]:
    """A compiled full-match regex for a star glob."""
    return re.compile(star_regex(pattern, star=star), flags)
