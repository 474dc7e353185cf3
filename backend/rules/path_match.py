"""Gitignore-style path patterns (`Read(...)`, `Edit(...)`, file tools) and the paths a call touches."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pathspec

from shared.home import TildeError, expand_home

Anchor = Literal["absolute", "home", "workspace", "anywhere"]

# A child name no pattern a person writes can mean: probing `dir/<it>` asks whether a pattern
# covers everything inside a directory (`src/**` does, `*.py` does not).
_CHILD_PROBE = "\x00"


@dataclass(frozen=True)
class PathPattern:
    """One path pattern, anchored the way RULES.md says.

    `//p` is absolute, `~/p` is under home, `/p`, `./p` and `p` with a slash are relative to
    the workspace, and a bare name (`.env`, `*.pem`) matches at any depth. `*` stays inside
    one segment and `**` spans many, as in `.gitignore`.
    """

    text: str
    anchor: Anchor
    pattern: str
    _spec: pathspec.PathSpec[pathspec.Pattern] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            spec = pathspec.PathSpec.from_lines("gitignore", [self.pattern])
        except Exception as exc:  # pathspec raises its own error types per pattern flavour
            raise ValueError(f"not a path pattern: {self.text!r} ({exc})") from exc
        if not spec.patterns or all(p.include is None for p in spec.patterns):
            raise ValueError(f"not a path pattern: {self.text!r}")
        object.__setattr__(self, "_spec", spec)

    @classmethod
    def parse(cls, specifier: str) -> PathPattern:
        """Parse the text inside `Read(...)`; ValueError when it is not a usable pattern."""
        text = specifier.strip()
        if not text:
            raise ValueError("empty path pattern")
        anchor: Anchor
        if text.startswith("//"):
            anchor, body = "absolute", text[2:]
        elif text == "~" or text.startswith("~/"):
            anchor, body = "home", text[2:]
        elif text.startswith("./"):
            anchor, body = "workspace", text[2:]
        elif text.startswith("/"):
            anchor, body = "workspace", text[1:]
        elif "/" in text.rstrip("/"):
            anchor, body = "workspace", text
        else:
            anchor, body = "anywhere", text
        if ".." in body.split("/"):
            raise ValueError(f"'..' is not allowed in a path pattern (use // or ~/): {specifier!r}")
        if body.startswith(("#", "!")):
            body = "\\" + body  # literal, not a gitignore comment or negation
        if anchor == "anywhere":
            line = body
        else:
            line = "/" + body if body.strip("/") else "/**"
        return cls(text, anchor, line)

    def matches(self, path: str, *, workspace: Path, everywhere: bool = False, as_dir: bool = False) -> bool:
        """Whether the absolute, normalised `path` matches.

        `everywhere` lets a bare name match outside the workspace too (deny and ask rules use
        it: a secret is a secret wherever it lies). `as_dir` also asks whether the pattern
        covers the directory's contents, for tools that read a whole directory.
        """
        as_dir = as_dir or os.path.isdir(path)
        for base in self._bases(workspace, everywhere):
            rel = _relative(path, base)
            if rel is None:
                continue
            probes = [rel] if rel else []
            if as_dir:
                if rel:
                    probes.append(rel + "/")
                probes.append(f"{rel}/{_CHILD_PROBE}" if rel else _CHILD_PROBE)
            if any(self._spec.match_file(probe) for probe in probes):
                return True
        return False

    def _bases(self, workspace: Path, everywhere: bool) -> list[str]:
        if self.anchor == "absolute" or (self.anchor == "anywhere" and everywhere):
            return ["/"]
        root = str(Path.home()) if self.anchor == "home" else str(workspace)
        return _unique([_normalise(root), os.path.realpath(root)])


def path_candidates(argument: object, workspace: Path) -> list[str] | None:
    """The absolute paths a path argument can mean, or None when it is not a usable path.

    Each reading is taken twice: normalised lexically (`..` resolved) and with symlinks
    resolved; allow needs every candidate to match, deny applies if any does.
    """
    if not isinstance(argument, str) or not argument or "\x00" in argument:
        return None
    readings = [argument]
    if argument.startswith("~"):
        # Whether a tool expands `~` is the tool's business; check both readings. The file
        # server expands it exactly so; a `~user` path it refuses, and so do rules (fail closed).
        try:
            readings.append(expand_home(argument))
        except TildeError:
            return None
    found: list[str] = []
    for reading in readings:
        joined = os.path.join(str(workspace), reading)
        found.extend([_normalise(joined), os.path.realpath(joined)])
    return _unique(found)


def is_inside(path: str, directory: Path) -> bool:
    """Whether an absolute path lies in `directory` (either spelling of it, symlinks resolved)."""
    return any(
        _relative(path, base) is not None
        for base in _unique([_normalise(str(directory)), os.path.realpath(directory)])
    )


def _normalise(path: str) -> str:
    normal = os.path.normpath(path)
    # POSIX keeps a leading `//`; it names the same directory as `/`.
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def _relative(path: str, base: str) -> str | None:
    if base == "/":
        return path.lstrip("/")
    if path == base:
        return ""
    if path.startswith(base.rstrip("/") + "/"):
        return path[len(base.rstrip("/")) + 1 :]
    return None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
