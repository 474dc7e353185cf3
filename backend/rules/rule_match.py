"""Whether one rule covers one call: the specifier read according to the rule's kind."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from backend.rules.param_match import ParamPattern
from backend.rules.path_match import PathPattern, path_candidates
from backend.rules.grammar import FILE_READ_TOOLS, FILE_WRITE_TOOLS, SHELL_TOOL, Rule
from backend.rules.shell_match import (
    CommandAnalysis,
    RedirectWrite,
    ShellPattern,
    allow_match,
    analyse_command,
    deny_match,
    unknown_match,
)
from backend.rules.url_match import DomainPattern, url_host

HitState = Literal["match", "miss", "malformed", "unchecked"]
"""`malformed`: the arguments could not be read, so the rule fails closed (deny/ask apply).
`unchecked`: a best-effort check found nothing but could not be complete, so the call asks."""

_WRITE_PROBE = "mcp__file__write_file"
_DIRECTORY_TOOLS = frozenset({"mcp__file__list_dir", "mcp__file__glob", "mcp__file__grep"})
_GLOB_MAGIC = re.compile(r"[*?\[{]")


@dataclass(frozen=True)
class Hit:
    """The outcome of matching one deny/ask rule, with a note for the reason text."""

    state: HitState
    detail: str = ""


_MISS = Hit("miss")


class Subject:
    """A call as the rules see it; every derived view (parsed command, paths, host) is built once."""

    def __init__(self, name: str, arguments: Any, workspace: Path) -> None:
        self.name = name
        self.arguments = arguments
        self.workspace = workspace

    def argument(self, key: str, default: Any = None) -> Any:
        """One top-level argument, or `default` when absent (or arguments are not a mapping)."""
        return self.arguments.get(key, default) if isinstance(self.arguments, dict) else default

    @cached_property
    def shell(self) -> CommandAnalysis | None:
        """The command argument, analysed; None when there is no command string."""
        command = self.argument("command")
        return analyse_command(command) if isinstance(command, str) else None

    @cached_property
    def paths(self) -> list[tuple[str, bool]] | None:
        """(absolute path, is a directory read) pairs this file-tool call touches; None if unreadable."""
        directory = self.name in _DIRECTORY_TOOLS
        raw = self.argument("path", "." if directory else None)
        found = path_candidates(raw, self.workspace)
        if found is None:
            return None
        pairs = [(p, directory) for p in found]
        pattern = self.argument("pattern")
        if self.name == "mcp__file__glob" and isinstance(pattern, str):
            # The glob's literal leading directories may leave `path`: `../../etc/*`.
            literal: list[str] = []
            for segment in pattern.split("/"):
                if _GLOB_MAGIC.search(segment):
                    break
                literal.append(segment)
            prefix = "/".join(literal) or ("/" if pattern.startswith("/") else "")
            if prefix:
                inner = path_candidates(os.path.join(str(raw), prefix), self.workspace) or []
                pairs += [(p, True) for p in inner]
        return pairs

    @cached_property
    def host(self) -> str | None:
        """The host of the `url` argument, when it can be told safely."""
        return url_host(self.argument("url"))


def match_deny_like(rule: Rule, subject: Subject, carve_outs: Sequence[Rule]) -> Hit:
    """Match a deny or ask rule. Fails closed: arguments it cannot read count as a match."""
    if subject.name == SHELL_TOOL and not rule.tools.selects(SHELL_TOOL):
        return _match_redirects(rule, subject, carve_outs)
    if not (rule.tools.selects(subject.name) or _read_deny_blocks(rule, subject.name)):
        return _MISS
    if rule.specifier is None:
        return Hit("match")
    spec = rule.specifier
    if isinstance(spec, ShellPattern):
        analysis = subject.shell
        if analysis is None:
            return Hit("malformed", "no command string")
        matched = next((p for p in analysis.parts if deny_match(spec, p)), None)
        if matched is not None:
            return Hit("match", f" matches `{matched.text}`" if matched.text != analysis.command else "")
        for part in analysis.parts:
            unknown = unknown_match(spec, part)
            if unknown is not None:
                # What runs cannot be told from the text, and it may be what the rule names.
                return Hit("match", f" may match `{part.text}`: {unknown.reason}")
        return Hit("unchecked", analysis.unchecked) if analysis.unchecked else _MISS
    if isinstance(spec, PathPattern):
        pairs = subject.paths
        if pairs is None:
            return Hit("malformed", "no usable path")
        for path, as_dir in pairs:
            if _path_hit(rule, spec, path, subject.workspace, as_dir, carve_outs):
                return Hit("match", f" covers {path}")
        return _MISS
    if isinstance(spec, DomainPattern):
        host = subject.host
        if host is None:
            return Hit("malformed", "no usable URL host")
        return Hit("match") if spec.matches(host) else _MISS
    state = spec.match(subject.arguments)
    return (
        Hit("malformed", f"argument {spec.name} is not a plain value") if state == "unchecked" else Hit(state)
    )


def _match_redirects(rule: Rule, subject: Subject, carve_outs: Sequence[Rule]) -> Hit:
    """A shell command's redirections are checked like an Edit of each target path."""
    if not (rule.tools.selects(_WRITE_PROBE) or _read_deny_blocks(rule, _WRITE_PROBE)):
        return _MISS
    analysis = subject.shell
    if analysis is None or not (analysis.writes or analysis.unchecked):
        return _MISS
    spec = rule.specifier
    if spec is None:
        if analysis.writes:
            return Hit("match", f" (redirect to {analysis.writes[0].raw})")
        return Hit("unchecked", analysis.unchecked or "")
    if not isinstance(spec, PathPattern):
        return _MISS
    unknown: RedirectWrite | None = None
    for write in analysis.writes:
        candidates = _redirect_candidates(write, subject.workspace, analysis)
        if candidates is None:
            unknown = unknown or write
            continue
        for path in candidates:
            if _path_hit(rule, spec, path, subject.workspace, False, carve_outs):
                return Hit("match", f" (redirect to {path})")
    if unknown is not None:
        return Hit("unchecked", f"redirect target {unknown.raw} is known only when the command runs")
    if analysis.unchecked:
        return Hit("unchecked", analysis.unchecked)
    return _MISS


def _redirect_candidates(
    write: RedirectWrite, workspace: Path, analysis: CommandAnalysis
) -> list[str] | None:
    """The paths a redirection may write, or None when they cannot be known beforehand."""
    if write.path is None or (analysis.changes_directory and not write.path.startswith("/")):
        return None
    return path_candidates(write.path, workspace)


def allowing_rules(
    rules: Sequence[Rule], subject: Subject, *, write_allowed: Callable[[list[str]], bool]
) -> list[Rule] | None:
    """The allow rules that together approve the call, or None when they do not.

    A shell command needs every part matched and every redirection allowed; a path needs
    every candidate (a symlink and its target) covered.
    """
    if subject.name == SHELL_TOOL:
        return _allowing_shell(rules, subject, write_allowed)
    candidates = [r for r in rules if r.tools.selects(subject.name) and not r.carve_out]
    for rule in candidates:
        if rule.specifier is None:
            return [rule]
        spec = rule.specifier
        if isinstance(spec, DomainPattern) and subject.host is not None and spec.matches(subject.host):
            return [rule]
        if isinstance(spec, ParamPattern) and spec.match(subject.arguments) == "match":
            return [rule]
        if isinstance(spec, ShellPattern):
            analysis = subject.shell
            if analysis is not None and _every_part_allowed(analysis, [rule]) is not None:
                return [rule]
    path_rules = [r for r in candidates if isinstance(r.specifier, PathPattern)]
    if not path_rules:  # before the paths: resolving them is file system calls
        return None
    pairs = subject.paths
    if not pairs:
        return None
    used = [_allowing_path(path_rules, path, subject.workspace, as_dir) for path, as_dir in pairs]
    if any(rule is None for rule in used):
        return None
    return _unique([rule for rule in used if rule is not None])


def _allowing_path_rule(rules: Sequence[Rule], path: str, workspace: Path, *, tool: str) -> Rule | None:
    """The allow rule for `tool` that covers `path`, if any (whole-tool rules cover every path)."""
    for rule in rules:
        if rule.tools.selects(tool) and rule.specifier is None:
            return rule
    return _allowing_path([r for r in rules if r.tools.selects(tool)], path, workspace, False)


def _allowing_shell(
    rules: Sequence[Rule], subject: Subject, write_allowed: Callable[[list[str]], bool]
) -> list[Rule] | None:
    analysis = subject.shell
    shell_rules = [r for r in rules if r.tools.selects(SHELL_TOOL) and r.kind in ("tool", "shell")]
    if analysis is None or analysis.allow_blocker or not shell_rules:
        return None
    used = _every_part_allowed(analysis, shell_rules)
    if used is None:
        return None
    for write in analysis.writes:
        paths = _redirect_candidates(write, subject.workspace, analysis)
        if paths is None:
            return None
        covering = [_allowing_path_rule(rules, p, subject.workspace, tool=_WRITE_PROBE) for p in paths]
        if all(rule is not None for rule in covering):
            used.extend(rule for rule in covering if rule is not None)
        elif not write_allowed(paths):
            return None
    return _unique(used)


def _every_part_allowed(analysis: CommandAnalysis, rules: Sequence[Rule]) -> list[Rule] | None:
    used: list[Rule] = []
    for part in analysis.parts:
        if part.deny_only:
            continue
        rule = next(
            (
                r
                for r in rules
                if r.specifier is None
                or (isinstance(r.specifier, ShellPattern) and allow_match(r.specifier, part))
            ),
            None,
        )
        if rule is None:
            return None
        used.append(rule)
    return used


def _allowing_path(rules: Sequence[Rule], path: str, workspace: Path, as_dir: bool) -> Rule | None:
    for rule in rules:
        spec = rule.specifier
        if isinstance(spec, PathPattern) and spec.matches(path, workspace=workspace, as_dir=as_dir):
            return rule
    return None


def _path_hit(
    rule: Rule, spec: PathPattern, path: str, workspace: Path, as_dir: bool, carve_outs: Sequence[Rule]
) -> bool:
    if not spec.matches(path, workspace=workspace, everywhere=True, as_dir=as_dir):
        return False
    for carve in carve_outs:
        if (
            carve.source == rule.source
            and _same_tools(carve, rule)
            and isinstance(carve.specifier, PathPattern)
            and carve.specifier.matches(path, workspace=workspace, everywhere=True, as_dir=as_dir)
        ):
            return False
    return True


def _same_tools(a: Rule, b: Rule) -> bool:
    return (a.tools.names, a.tools.server, a.tools.tool) == (b.tools.names, b.tools.server, b.tools.tool)


def _read_deny_blocks(rule: Rule, tool: str) -> bool:
    """A Read deny also blocks writes to its paths."""
    return (
        rule.effect == "deny"
        and rule.kind == "path"
        and tool in FILE_WRITE_TOOLS
        and any(rule.tools.selects(name) for name in FILE_READ_TOOLS)
    )


def _unique(rules: list[Rule]) -> list[Rule]:
    seen: list[Rule] = []
    for rule in rules:
        if not any(rule is s for s in seen):
            seen.append(rule)
    return seen
