"""The permission rule grammar: `Tool` / `Tool(specifier)` strings parsed into typed rules.

Claude Code's names are aliases, so a pasted `permissions` block works: `Bash(...)` is
`mcp__shell__exec(...)`, `Read(...)`/`Edit(...)` are the file server's reading/writing tools,
`WebFetch(domain:...)` is the browser's `navigate`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from backend.domain.errors import Invalid
from backend.domain.tools import TOOL_PREFIX, full_tool_name, split_tool_name
from backend.rules.globbing import compile_star
from backend.rules.param_match import ParamPattern
from backend.rules.path_match import PathPattern
from backend.rules.shell_match import ShellPattern
from backend.rules.url_match import DOMAIN_PREFIX, DomainPattern

logger = logging.getLogger(__name__)

Effect = Literal["allow", "ask", "deny"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)
SpecifierKind = Literal["tool", "shell", "path", "url", "param"]
Specifier = ShellPattern | PathPattern | DomainPattern | ParamPattern

SHELL_TOOL = full_tool_name("shell", "exec")
NAVIGATE_TOOL = full_tool_name("browser", "navigate")
FILE_READ_TOOLS = frozenset(full_tool_name("file", t) for t in ("read_file", "list_dir", "glob", "grep"))
FILE_WRITE_TOOLS = frozenset(full_tool_name("file", t) for t in ("write_file", "edit_file"))
FILE_TOOLS = FILE_READ_TOOLS | FILE_WRITE_TOOLS

ALIASES: dict[str, frozenset[str]] = {
    "Bash": frozenset({SHELL_TOOL}),
    "Read": FILE_READ_TOOLS,
    "Edit": FILE_WRITE_TOOLS,
    "Write": FILE_WRITE_TOOLS,
    "MultiEdit": FILE_WRITE_TOOLS,
    "Glob": frozenset({full_tool_name("file", "glob")}),
    "Grep": frozenset({full_tool_name("file", "grep")}),
    "LS": frozenset({full_tool_name("file", "list_dir")}),
    "WebFetch": frozenset({NAVIGATE_TOOL}),
}
# Claude Code tools Overseer has no counterpart for: a pasted rule naming one is skipped, loudly.
UNMAPPED_CLAUDE_TOOLS = frozenset(
    """WebSearch Task Agent TodoWrite NotebookEdit NotebookRead KillShell BashOutput SlashCommand
    Skill ExitPlanMode ListMcpResourcesTool ReadMcpResourceTool""".split()
)
# Keys of Claude Code's `permissions` block that are not rule lists.
_SETTINGS_KEYS = frozenset({"defaultMode", "additionalDirectories", "disableBypassPermissionsMode", "after_untrusted"})

_RULE = re.compile(r"^([^\s()]+)(?:\((.*)\))?$", re.DOTALL)
_NAME_SEGMENT = re.compile(r"^[A-Za-z0-9_.*-]+$")


class RuleError(Invalid):
    """A rule string (or rule list) that cannot be used as written."""


class UnanchoredAllowError(RuleError):
    """An allow rule whose server is a glob (`mcp__*`, `*`): it would approve every tool."""


@dataclass(frozen=True)
class ToolSelector:
    """The tool part of a rule: an alias, an exact name, a server, or a name glob.

    The server segment is compared whole: `mcp__github` never selects `mcp__github-enterprise__x`.
    """

    text: str
    names: frozenset[str] | None = None
    """Exact tool names, when the selector has no wildcard."""
    server: str = "*"
    tool: str = "*"
    _server_re: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _tool_re: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_server_re", compile_star(self.server))
        object.__setattr__(self, "_tool_re", compile_star(self.tool))

    @classmethod
    def parse(cls, text: str) -> ToolSelector:
        """`Bash`, `mcp__srv`, `mcp__srv__*`, `mcp__srv__get_*`, `mcp__*`, `*` -> selector."""
        if text in ALIASES:
            return cls(text, names=ALIASES[text])
        if text == "*":
            return cls(text)
        if not text.startswith(TOOL_PREFIX):
            raise RuleError(
                f"unknown tool {text!r} (expected mcp__<server>[__<tool>] or a Claude Code alias)"
            )
        server, sep, tool = text[len(TOOL_PREFIX) :].partition("__")
        if not server or (sep and not tool):
            raise RuleError(f"malformed tool name {text!r}")
        tool = tool or "*"
        if not _NAME_SEGMENT.match(server) or not _NAME_SEGMENT.match(tool):
            raise RuleError(f"malformed tool name {text!r}")
        if "*" not in server and "*" not in tool:
            return cls(text, names=frozenset({text}), server=server, tool=tool)
        return cls(text, server=server, tool=tool)

    @property
    def anchored(self) -> bool:
        """Whether the server is literal, the condition for an allow rule."""
        return self.names is not None or "*" not in self.server

    @property
    def literal_server(self) -> str | None:
        """The one server this selector is confined to, if it is."""
        if self.names is not None:
            servers = {parts[0] for name in self.names if (parts := split_tool_name(name))}
            return next(iter(servers)) if len(servers) == 1 else None
        return None if "*" in self.server else self.server

    def selects(self, name: str) -> bool:
        """Whether the selector covers the full tool name `name`."""
        if self.names is not None:
            return name in self.names
        parts = split_tool_name(name)
        if parts is None:
            return self.text == "*"
        return bool(self._server_re.fullmatch(parts[0]) and self._tool_re.fullmatch(parts[1]))


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One parsed rule, remembering its text and where it came from."""

    raw: str
    effect: Effect
    source: str
    """Where the rule was loaded from: "user", "workspace", "session", "default", ..."""
    tools: ToolSelector
    kind: SpecifierKind
    """How the specifier is read; "tool" when there is none (the rule covers the whole tool)."""
    specifier: Specifier | None = None
    carve_out: bool = False
    """A `!pattern` path rule: carves its paths out of the same source's rules of this effect."""

    @property
    def label(self) -> str:
        """`deny rule Bash(rm *) (user)`: how a decision names this rule."""
        kind = f"{self.effect} carve-out" if self.carve_out else f"{self.effect} rule"
        return f"{kind} {self.raw} ({self.source})"


def parse_rule(text: object, *, effect: Effect, source: str) -> Rule | None:
    """Parse one rule string.

    Raises RuleError when malformed and UnanchoredAllowError for an allow rule that would
    approve every server. Returns None (after a warning) for a Claude Code tool Overseer does
    not have, such as `WebSearch`.
    """
    if effect not in EFFECTS:
        raise RuleError(f"unknown rule list {effect!r}")
    if not isinstance(text, str):
        raise RuleError(f"a rule must be a string, got {text!r}")
    raw = text.strip()
    found = _RULE.match(raw)
    if found is None:
        raise RuleError(f"malformed rule {text!r} (expected Tool or Tool(specifier))")
    name, inner = found.group(1), found.group(2)
    if name in UNMAPPED_CLAUDE_TOOLS:
        logger.warning("%s rule %r (%s) ignored: Overseer has no %s tool", effect, raw, source, name)
        return None
    tools = ToolSelector.parse(name)
    if effect == "allow" and not tools.anchored:
        raise UnanchoredAllowError(f"allow rule {raw!r} refused: a glob server would approve every tool")
    if inner is not None and not inner.strip():
        raise RuleError(f"empty specifier in {raw!r} (write {name} for the whole tool)")
    spec = None if inner is None or inner.strip() == "*" else inner.strip()
    if spec is None:
        return Rule(raw=raw, effect=effect, source=source, tools=tools, kind="tool")
    carve_out = spec.startswith("!")
    if carve_out:
        spec = spec[1:]
    kind = _kind_for(tools, spec)
    if kind == "url" and name == "WebFetch" and not spec.startswith(DOMAIN_PREFIX):
        raise RuleError(f"{raw!r}: WebFetch takes domain:<host>")
    if carve_out and (kind != "path" or effect == "allow"):
        raise RuleError(f"{raw!r}: '!' carve-outs are for path rules in deny and ask lists")
    try:
        specifier = _compile(kind, spec)
    except ValueError as exc:
        raise RuleError(f"{raw!r}: {exc}") from exc
    return Rule(
        raw=raw,
        effect=effect,
        source=source,
        tools=tools,
        kind=kind,
        specifier=specifier,
        carve_out=carve_out,
    )


def _kind_for(tools: ToolSelector, spec: str) -> SpecifierKind:
    if tools.text == "WebFetch":
        return "url"
    server = tools.literal_server
    if server == "shell" and tools.selects(SHELL_TOOL):
        return "shell"
    if server == "file":
        return "path"
    if server == "browser" and tools.selects(NAVIGATE_TOOL) and spec.startswith(DOMAIN_PREFIX):
        return "url"
    return "param"


def _compile(kind: SpecifierKind, spec: str) -> Specifier:
    if kind == "shell":
        return ShellPattern.parse(spec)
    if kind == "path":
        return PathPattern.parse(spec)
    if kind == "url":
        return DomainPattern.parse(spec)
    return ParamPattern.parse(spec)


@dataclass(kw_only=True)
class RuleSet:
    """Allow, ask and deny rules. Sets from every source are concatenated; order never matters."""

    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, *, source: str, strict: bool = False) -> RuleSet:
        """Build from `{"allow": [...], "ask": [...], "deny": [...]}` (a pasted Claude Code block works).

        Every malformed rule is collected into one RuleError, so a file holding deny rules
        never loads with some of them silently missing. Unanchored allow rules are refused
        with a warning, or, with `strict` (a person editing rules right now), as an error.
        """
        if config is None:
            return cls()
        if not isinstance(config, Mapping):
            raise RuleError(f"{source}: permissions must be a mapping, got {type(config).__name__}")
        lists: dict[Effect, list[Rule]] = {"allow": [], "ask": [], "deny": []}
        errors: list[str] = []
        for key, entries in config.items():
            if key not in lists:
                if key not in _SETTINGS_KEYS:
                    logger.warning("%s: unknown permissions key %r ignored", source, key)
                continue
            if entries is None:
                continue
            if isinstance(entries, str) or not isinstance(entries, Iterable):
                errors.append(f"{key} must be a list of rule strings")
                continue
            for entry in entries:
                try:
                    rule = parse_rule(entry, effect=key, source=source)
                except UnanchoredAllowError as exc:
                    if strict:
                        errors.append(str(exc))
                    else:
                        logger.warning("%s: %s", source, exc)
                    continue
                except RuleError as exc:
                    errors.append(str(exc))
                    continue
                if rule is not None:
                    lists[key].append(rule)
        if errors:
            raise RuleError(f"{source}: " + "; ".join(errors))
        return cls(**lists)

    @classmethod
    def concat(cls, *sets: RuleSet | None) -> RuleSet:
        """All the rules of `sets`, in one set."""
        merged = cls()
        for rule_set in sets:
            if rule_set is not None:
                merged.allow.extend(rule_set.allow)
                merged.ask.extend(rule_set.ask)
                merged.deny.extend(rule_set.deny)
        return merged

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet.concat(self, other)

    def rules(self, effect: Effect) -> list[Rule]:
        """The list for one effect."""
        return {"allow": self.allow, "ask": self.ask, "deny": self.deny}[effect]

    def __len__(self) -> int:
        return len(self.allow) + len(self.ask) + len(self.deny)
