"""Rules that name no server: which rules cover no tool that exists here (issue 35, item 12).

A rule is matched against tool names, so one naming a server that is not configured covers
nothing, silently. After a pasted `memory` server is renamed `memory-server`, the rule
`deny: mcp__memory__delete_entities` stops denying anything, and the call it meant to stop only
asks (or runs, if something allows it). So each rule is checked against what is configured:

- the server part against the configured servers' names (remote or not yet started included);
- the tool part against a server's tools, only once that server has listed them (a server not
  listed yet is checked by its name alone: its tools may still come).

A rule that covers nothing is a warning. A deny rule that covers nothing is an error (the host
refuses to start), unless it is listed word for word in `deny_unmatched_ok` in overseer.yaml: a
deny kept for a server that may be added later. Claude Code's aliases (`Bash`, `Read`, `Edit`,
`WebFetch`, ...) stand for built-in servers, which are switched off on purpose
(`builtin_servers: false`, or no shell where nothing can confine commands): a warning only.

Pure: the caller says which servers exist and which tools each has listed.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from backend.domain.tools import split_tool_name
from backend.rules.globbing import compile_star
from backend.rules.grammar import ALIASES, EFFECTS, Effect, Rule, RuleSet

FindingLevel = Literal["warning", "error"]

INTENDED_SETTING = "deny_unmatched_ok"
"""The overseer.yaml list of deny rules that may cover nothing (word for word)."""


@dataclass(frozen=True, kw_only=True)
class RuleFinding:
    """One rule that names a server or tool that does not exist here."""

    level: FindingLevel
    rule: str
    effect: Effect
    source: str
    message: str


ServerTools = Mapping[str, Collection[str] | None]
"""Configured server name -> the tools it listed (short names), or None while not listed."""


def check_rule_references(
    rules: RuleSet, servers: ServerTools, *, intended: Collection[str] = ()
) -> list[RuleFinding]:
    """Every rule of `rules` that covers no tool of `servers`, errors first."""
    wanted = {text.strip() for text in intended}
    findings: list[RuleFinding] = []
    for effect in EFFECTS:
        for rule in rules.rules(effect):
            why = _covers_nothing(rule, servers)
            if why is None:
                continue
            is_alias = rule.tools.text in ALIASES
            level: FindingLevel = "error" if effect == "deny" and not is_alias and rule.raw not in wanted else "warning"
            if level == "error":
                why += f". Fix the rule, or list it under {INTENDED_SETTING} in overseer.yaml if it is meant to cover nothing yet"
            elif effect == "deny" and not is_alias:
                why += f" (listed in {INTENDED_SETTING})"
            findings.append(
                RuleFinding(
                    level=level,
                    rule=rule.raw,
                    effect=effect,
                    source=rule.source,
                    message=f"{effect} rule {rule.raw!r} ({rule.source}) covers nothing: {why}",
                )
            )
    return sorted(findings, key=lambda f: f.level != "error")


def unlisted_servers_named(
    rules: RuleSet, servers: ServerTools, *, among: Collection[str], intended: Collection[str] = ()
) -> set[str]:
    """The servers of `among` not listed yet whose tools a deny rule names (not `*`, not intended):
    whether that rule covers anything is known once they list their tools."""
    wanted = {text.strip() for text in intended}
    named: set[str] = set()
    for rule in rules.deny:
        if rule.tools.text in ALIASES or rule.tools.tool == "*" or rule.raw in wanted:
            continue
        server_re = compile_star(rule.tools.server)
        named |= {n for n in among if servers.get(n, ()) is None and n in servers and server_re.fullmatch(n)}
    return named


def _covers_nothing(rule: Rule, servers: ServerTools) -> str | None:
    """Why the rule covers no tool of `servers`, or None when it may cover one."""
    selector = rule.tools
    if selector.text == "*":
        return None
    if selector.text in ALIASES:
        names = selector.names or frozenset()
        wanted = sorted({parts[0] for n in names if (parts := split_tool_name(n))})
        if any(s in servers for s in wanted):
            return None
        return f"{selector.text} stands for the built-in {' or '.join(wanted)} server, which is not running here"
    server_re = compile_star(selector.server)
    matching = [name for name in servers if server_re.fullmatch(name)]
    if not matching:
        hint = _likely_servers(selector.server, selector.tool, servers)
        said = f"no MCP server is named {selector.server!r}" if "*" not in selector.server else (
            f"no MCP server's name matches {selector.server!r}"
        )
        if hint:
            said += ". Did you mean " + " or ".join(
                f"{name!r} ({_renamed(selector.text, selector.server, name)})" for name in hint
            ) + "?"
        return said
    if selector.tool == "*":
        return None
    listed = [servers[name] for name in matching]
    if any(tools is None for tools in listed):
        return None  # a server that has not listed its tools yet may still have it
    tool_re = compile_star(selector.tool)
    if any(tool_re.fullmatch(tool) for tools in listed for tool in tools or ()):
        return None
    where = f"server {matching[0]!r}" if len(matching) == 1 else f"servers {', '.join(map(repr, matching))}"
    known = sorted({t for tools in listed for t in tools or ()})
    close = difflib.get_close_matches(selector.tool, known, n=2, cutoff=0.6)
    said = f"{where} has no tool {selector.tool!r}"
    meant = [
        f"{name!r} ({_renamed(selector.text, selector.server, name)})"
        for name in _likely_servers(selector.server, selector.tool, servers)
        if name not in matching
    ]
    if close or meant:
        said += ". Did you mean " + " or ".join([*(repr(t) for t in close), *(f"the server {m}" for m in meant)]) + "?"
    return said


def _likely_servers(server: str, tool: str, servers: ServerTools) -> list[str]:
    """The configured servers a rule most likely meant: those that list its tool, then names like its server's."""
    having = [name for name, tools in servers.items() if tool != "*" and tools is not None and tool in tools]
    plain = server.replace("*", "")
    alike = [name for name in servers if plain and (plain in name or name in plain)]
    close = difflib.get_close_matches(server, list(servers), n=2, cutoff=0.6)
    return list(dict.fromkeys([*having, *alike, *close]))[:2]


def _renamed(text: str, old: str, new: str) -> str:
    """The rule's tool part with its server renamed: `mcp__memory__x` -> `mcp__memory-server__x`."""
    prefix = f"mcp__{old}"
    return f"mcp__{new}{text[len(prefix):]}" if text.startswith(prefix) else f"mcp__{new}"


def findings_text(findings: Iterable[RuleFinding]) -> str:
    """The findings as lines, for a log or an error."""
    return "\n".join(f"- {f.message}" for f in findings)
