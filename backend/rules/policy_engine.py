"""The PolicyEngine: one call in, a verdict out (Overseer's own folders > managed deny > managed ask >
deny > ask > allow > policy > read-only > ask)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from backend.domain.errors import Invalid
from backend.domain.models import StandingScope
from backend.domain.tools import ToolAnnotations, full_tool_name, split_tool_name
from backend.rules.path_match import is_inside
from backend.rules.rule_match import Hit, Subject, allowing_rules, match_deny_like
from backend.rules.scoped_allows import ScopedAllows
from backend.rules import pinned_tools
from backend.domain.tool_pins import ToolChange
from backend.rules.managed import MANAGED_PREFIX
from backend.rules.own_data import SOURCE as OWN_DATA_SOURCE, OwnDataGuard
from backend.rules.grammar import (
    FILE_READ_TOOLS,
    FILE_WRITE_TOOLS,
    SHELL_TOOL,
    Effect,
    Rule,
    RuleError,
    RuleSet,
    ToolSelector,
)

Policy = Literal["always_allow", "ask", "deny"]
POLICIES: tuple[Policy, ...] = get_args(Policy)


READ_PROBE = full_tool_name("file", "read_file")
"""The tool a listed path is judged as: showing a file's name or lines is reading it."""


class PolicyError(Invalid):
    """A per-tool policy whose key or value cannot be used."""

# Tools of the other built-in servers, by what a person would want to see before they run.
_QUIET_TOOLS = {
    "browser": ("snapshot", "screenshot", "tabs"),
    "memory": ("memory_read", "memory_search", "memory_save"),
    "cron": ("cron_list",),
    "invoke_agent": ("invoke_agent",),
}
_ASKING_TOOLS = {
    "browser": ("navigate", "back", "forward", "click", "type", "press", "select", "evaluate"),
    "memory": ("memory_forget",),
    "cron": ("cron_create", "cron_delete", "cron_pause", "cron_resume"),
}

DEFAULT_POLICIES: dict[str, Policy] = {
    **{name: "always_allow" for name in sorted(FILE_READ_TOOLS)},
    **{name: "ask" for name in sorted(FILE_WRITE_TOOLS)},
    SHELL_TOOL: "ask",
    **{full_tool_name(server, tool): "always_allow" for server, tools in _QUIET_TOOLS.items() for tool in tools},
    **{full_tool_name(server, tool): "ask" for server, tools in _ASKING_TOOLS.items() for tool in tools},
}
"""Built-in policies. Reading runs and writing asks; the browser asks before it acts on the open web
(it carries the session's data to any site) but not to look at the page it is on; memory notes
run, forgetting asks; scheduling asks, since a job runs later with nobody watching; a sub-agent
runs, since each of its own tool calls passes the gate."""

DEFAULT_TRUSTED_SERVERS: tuple[str, ...] = ("file", "shell", "browser", "memory", "cron", "invoke_agent")

_WRITE_FILE = full_tool_name("file", "write_file")
READ_ONLY_TOOLS_SOURCE = "allow_read_only_tools"
"""The `source` of an allow that `allow_read_only_tools` gave a third-party read-only tool."""
_VERDICTS: dict[Policy, Effect] = {"always_allow": "allow", "ask": "ask", "deny": "deny"}
_STRICTNESS: dict[Policy, int] = {"always_allow": 0, "ask": 1, "deny": 2}


@dataclass(kw_only=True)
class ToolCallView:
    """What is being evaluated: one tool call, in the workspace it would run in."""

    name: str
    """Full name, e.g. "mcp__shell__exec"."""
    arguments: dict[str, Any]
    workspace: Path
    """Absolute workspace root."""
    annotations: ToolAnnotations | None = None
    changed: ToolChange | None = None
    """The tool's definition differs from its pin (issue 34): the call asks whatever allows it."""


@dataclass(kw_only=True)
class Evaluation:
    """A verdict and what decided it, in words a person can read."""

    verdict: Effect
    reason: str
    rule: str | None = None
    """Raw text of the deciding rule, if a rule decided."""
    source: str | None = None
    """Where the deciding rule or policy came from ("user", "default", "mode:plan", ...)."""


@dataclass(frozen=True)
class _PolicyEntry:
    key: str
    policy: Policy
    source: str
    selector: ToolSelector
    rank: int
    literal: int

    @classmethod
    def of(cls, key: str, policy: Policy, source: str) -> _PolicyEntry:
        """Validate one `key: policy` pair; PolicyError when either is unusable."""
        if policy not in POLICIES:
            raise PolicyError(f"policy for {key!r} must be one of {', '.join(POLICIES)}, got {policy!r}")
        if key != "*" and not key.startswith("mcp__"):
            raise PolicyError(f"policy key {key!r} is not a tool name, server or glob")
        try:
            selector = ToolSelector.parse(key)
        except RuleError as exc:
            raise PolicyError(f"policy key {key!r}: {exc}") from exc
        if selector.names is not None:
            rank = 3
        elif not selector.anchored:
            rank = 0  # `*`, `mcp__*`: a glob over servers is the least specific of all
        elif key.count("__") == 1:
            rank = 1  # `mcp__shell`: the whole server
        else:
            rank = 2
        return cls(key, policy, source, selector, rank, len(key.replace("*", "")))


class PolicyEngine:
    """Evaluates tool calls against pooled rules and per-tool policies.

    Steps (RULES.md "Evaluation of one call"): before everything, Overseer's own folders (the
    data dir, the checkpoints dir) are denied to the file tools (backend/rules/own_data.py);
    then the managed layer (issue 34, item 2): its deny rules block and its ask rules ask, whatever any other layer says; then deny rules block; ask rules ask; allow rules
    allow (never a write in plan mode); then the tool's policy (mode policies first, the most
    specific key winning: tool > glob > server); then read-only auto-allow for trusted
    servers when enabled; otherwise ask.
    """

    def __init__(
        self,
        rules: RuleSet,
        policies: Mapping[str, Policy] | None = None,
        *,
        read_only_auto_allow: bool = False,
        trusted_servers: Collection[str] = DEFAULT_TRUSTED_SERVERS,
        policies_source: str | None = None,
        managed: RuleSet | None = None,
        allow_read_only_tools: bool = False,
        own_data: OwnDataGuard | None = None,
    ) -> None:
        """`policies=None` means DEFAULT_POLICIES; a mapping given replaces them (merge it yourself).
        `managed`: the managed policy's deny and ask rules, evaluated before everything else.
        `allow_read_only_tools`: a third-party tool its server annotates read-only runs unasked when
        its definition is the pinned one (issue 34, item 4); rules and policies still decide first.
        `own_data`: Overseer's own folders, denied to the file tools before any rule is read.

        Reasons name a policy's source: `policies_source` if given, else "default" for a
        built-in value left as it is and "config" for anything else. Invalid keys or values
        raise PolicyError.
        """
        self.rules = rules
        self.managed = managed if managed is not None else RuleSet()
        self.own_data = own_data
        self.policies: dict[str, Policy] = dict(DEFAULT_POLICIES if policies is None else policies)
        self.policies_source = policies_source
        self.read_only_auto_allow = read_only_auto_allow
        self.allow_read_only_tools = allow_read_only_tools
        self.trusted_servers = frozenset(trusted_servers)
        self._entries = _entries(
            self.policies, policies_source or "config", defaults_named=policies_source is None
        )
        self._resolved: dict[str, _PolicyEntry | None] = {}
        """This engine's own entry for each tool name seen: its entries never change, and every
        call of every session looks one up (mode policies differ per call and are not kept)."""

    def with_rules(self, extra: RuleSet) -> PolicyEngine:
        """A new engine with `extra` rules concatenated to these."""
        return PolicyEngine(
            RuleSet.concat(self.rules, extra),
            self.policies,
            read_only_auto_allow=self.read_only_auto_allow,
            trusted_servers=self.trusted_servers,
            policies_source=self.policies_source,
            managed=self.managed,
            allow_read_only_tools=self.allow_read_only_tools,
            own_data=self.own_data,
        )

    def evaluate(
        self,
        call: ToolCallView,
        *,
        session_rules: RuleSet | None = None,
        mode: str | None = None,
        mode_policies: Mapping[str, Policy] | None = None,
    ) -> Evaluation:
        """Decide one call. Never raises for odd arguments: rules that cannot read them fail closed.

        The managed layer first: its deny denies; its ask asks unless a layer below denies (a
        managed rule only ever makes a call stricter), whatever allows it below.
        """
        if self.own_data is not None:
            refused = self.own_data.refusal(call.name, call.arguments, call.workspace)
            if refused is not None:
                return Evaluation(verdict="deny", reason=refused, source=OWN_DATA_SOURCE)
        subject = Subject(call.name, call.arguments, call.workspace)
        managed = _managed_verdict(self.managed, subject) if len(self.managed) else None
        if managed is not None and managed.verdict == "deny":
            return managed
        below = self._evaluate_below(
            call, subject, session_rules=session_rules, mode=mode, mode_policies=mode_policies
        )
        return below if managed is None or below.verdict == "deny" else managed

    def _evaluate_below(
        self,
        call: ToolCallView,
        subject: Subject,
        *,
        session_rules: RuleSet | None,
        mode: str | None,
        mode_policies: Mapping[str, Policy] | None,
    ) -> Evaluation:
        """Every layer under the managed one (RULES.md's steps)."""
        rules = RuleSet.concat(self.rules, session_rules)
        mode_entries = _entries(mode_policies or {}, f"mode:{mode}" if mode else "mode")
        entry = _resolve(call.name, mode_entries) or self._own_entry(call.name)

        decided, unchecked = _deny_or_ask(rules, subject)
        if decided is not None:
            return decided
        if unchecked is not None:
            # The call may hide what the rule forbids: at least ask, and never less than the policy.
            if entry is not None and entry.policy == "deny":
                return _by_policy(entry)
            rule, hit = unchecked
            return _by_rule("ask", rule, f"{rule.label} could not be checked ({hit.detail}): ask")
        if call.changed is not None:  # issue 34: no allow covers a tool that changed since it was pinned
            if entry is not None and entry.policy == "deny":
                return _by_policy(entry)
            reason = pinned_tools.changed_reason(call.changed)
            return Evaluation(verdict="ask", reason=reason, source=pinned_tools.CHANGED_SOURCE)

        plan_blocks = mode == "plan" and not is_read_only(call)
        write_allowed = partial(self._write_allowed, call=call, mode_entries=mode_entries)
        # A third-party destructive tool is allowed only by a rule or policy naming it (pinned_tools.py).
        naming = pinned_tools.needs_naming(call.name, call.annotations, self.trusted_servers)
        allow_rules = pinned_tools.naming_rules(rules.allow, call.name) if naming else rules.allow
        allowed = allowing_rules(allow_rules, subject, write_allowed=write_allowed)
        wide = allowing_rules(rules.allow, subject, write_allowed=write_allowed) if naming and not allowed else None
        broad = f"allow rule {wide[0].raw} ({wide[0].source})" if wide else None
        if allowed and not plan_blocks:
            word = "rule" if len(allowed) == 1 else "rules"
            labels = ", ".join(f"{r.raw} ({r.source})" for r in allowed)
            return _by_rule("allow", allowed[0], f"allow {word} {labels}")
        if plan_blocks and (allowed or (entry is not None and entry.policy == "always_allow")):
            if entry is not None and entry.policy == "deny":
                return _by_policy(entry)
            what = f"allow rule {allowed[0].raw} ({allowed[0].source})" if allowed else _policy_text(entry)
            reason = f"{what}, but plan mode never auto-approves a write: ask"
            return Evaluation(verdict="ask", reason=reason, source="mode:plan")
        if naming and entry is not None and entry.policy == "always_allow" and entry.rank < 3:
            broad = _policy_text(entry)
        elif entry is not None:
            return _by_policy(entry)
        if broad is not None:
            return Evaluation(
                verdict="ask", reason=pinned_tools.broad_allow_reason(broad), source=pinned_tools.DESTRUCTIVE_SOURCE
            )

        server = (split_tool_name(call.name) or ("", ""))[0]
        if (
            self.read_only_auto_allow
            and server in self.trusted_servers
            and _annotated_read_only(call.annotations)
        ):
            reason = f"read-only tool of trusted server {server}: auto-allowed"
            return Evaluation(verdict="allow", reason=reason, source="read_only_auto_allow")
        if self._third_party_read_only(server, call.annotations):  # `changed` asked above
            reason = f"read-only tool of {server}, as pinned: allowed (allow_read_only_tools)"
            return Evaluation(verdict="allow", reason=reason, source=READ_ONLY_TOOLS_SOURCE)
        return Evaluation(verdict="ask", reason="no rule or policy matched: ask")

    def _third_party_read_only(self, server: str, annotations: ToolAnnotations | None) -> bool:
        """`allow_read_only_tools` covers this tool: on, a server's tool (not a trusted one's, whose
        reads `read_only_auto_allow` governs), annotated read-only and not destructive."""
        return (
            self.allow_read_only_tools
            and bool(server)
            and server not in self.trusted_servers
            and _annotated_read_only(annotations)
        )

    def hides(self, path: str, workspace: Path) -> bool:
        """Whether a deny rule forbids reading `path`, or it is Overseer's own, so that no search or
        listing may show it."""
        if self.own_data is not None and self.own_data.hides(path, workspace):
            return True
        subject = Subject(READ_PROBE, {"path": path}, workspace)
        denies = self.managed.rules("deny") + self.rules.rules("deny")
        carve_outs = [r for r in denies if r.carve_out]
        return any(
            match_deny_like(rule, subject, carve_outs).state in ("match", "malformed")
            for rule in denies
            if not rule.carve_out
        )

    def managed_catches(self, name: str) -> bool:
        """Whether a managed deny or ask rule covers every call of the tool (no specifier): then it
        never runs unasked, whatever its policy says."""
        return any(
            rule.kind == "tool" and rule.tools.selects(name)
            for rule in (*self.managed.rules("deny"), *self.managed.rules("ask"))
        )

    def policy_for(self, name: str, mode_policies: Mapping[str, Policy] | None = None) -> Policy | None:
        """The policy that applies to a tool (mode policies first), or None."""
        entry = _resolve(name, _entries(mode_policies or {}, "mode")) or self._own_entry(name)
        return None if entry is None else entry.policy

    def effective_policy(self, name: str, annotations: ToolAnnotations | None) -> Policy:
        """What a call of the tool that no rule matches gets (the last steps of `evaluate`)."""
        chosen = self.policy_for(name)
        entry = self._own_entry(name)
        if chosen == "always_allow" and entry is not None and entry.rank < 3:  # a server-wide allow
            if pinned_tools.needs_naming(name, annotations, self.trusted_servers):
                return "ask"  # does not cover a third-party destructive tool
        if chosen is not None:
            return chosen
        server = (split_tool_name(name) or ("", ""))[0]
        if self.read_only_auto_allow and server in self.trusted_servers and _annotated_read_only(annotations):
            return "always_allow"
        if self._third_party_read_only(server, annotations):
            return "always_allow"
        return "ask"

    def _own_entry(self, name: str) -> _PolicyEntry | None:
        try:
            return self._resolved[name]
        except KeyError:
            if len(self._resolved) >= _RESOLVED_KEPT:  # names come from callers: keep the map bounded
                self._resolved.clear()
            entry = self._resolved[name] = _resolve(name, self._entries)
            return entry

    def _write_allowed(self, paths: list[str], call: ToolCallView, mode_entries: list[_PolicyEntry]) -> bool:
        """A redirection inside the workspace is approved where writing files is `always_allow`."""
        entry = _resolve(_WRITE_FILE, mode_entries) or self._own_entry(_WRITE_FILE)
        return (
            entry is not None
            and entry.policy == "always_allow"
            and all(is_inside(p, call.workspace) for p in paths)
        )


def is_read_only(call: ToolCallView) -> bool:
    """Whether a call cannot change anything: the file server's readers, or a tool annotated so.

    File writes/edits and the shell are never read-only; missing annotations are not read-only.
    """
    if call.name in FILE_READ_TOOLS:
        return True
    if call.name in FILE_WRITE_TOOLS or call.name == SHELL_TOOL:
        return False
    return _annotated_read_only(call.annotations)


def _annotated_read_only(annotations: ToolAnnotations | None) -> bool:
    return (
        annotations is not None
        and annotations.readOnlyHint is True
        and annotations.destructiveHint is not True
    )


def _deny_or_ask(rules: RuleSet, subject: Subject) -> tuple[Evaluation | None, tuple[Rule, Hit] | None]:
    """Steps 2 and 3: the first deny, else the first ask; or the first rule that could not be checked."""
    unchecked: tuple[Rule, Hit] | None = None
    for effect in ("deny", "ask"):
        carve_outs = [r for r in rules.rules(effect) if r.carve_out]
        for rule in rules.rules(effect):
            if rule.carve_out:
                continue
            hit = match_deny_like(rule, subject, carve_outs)
            if hit.state == "match":
                return _by_rule(effect, rule, f"{rule.label}{hit.detail}"), None
            if hit.state == "malformed":
                return _by_rule(effect, rule, f"{rule.label}: {hit.detail}, so it fails closed"), None
            if hit.state == "unchecked" and unchecked is None:
                unchecked = (rule, hit)
    return None, unchecked


def _managed_verdict(managed: RuleSet, subject: Subject) -> Evaluation | None:
    """The managed layer's verdict (its reason begins with MANAGED_PREFIX), or None to go on.

    A managed rule that cannot be checked (the call may hide what it names) asks, as any other would.
    """
    decided, unchecked = _deny_or_ask(managed, subject)
    if decided is not None:
        decided.reason = MANAGED_PREFIX + decided.reason
        return decided
    if unchecked is not None:
        rule, hit = unchecked
        return _by_rule("ask", rule, f"{MANAGED_PREFIX}{rule.label} could not be checked ({hit.detail}): ask")
    return None


def _by_policy(entry: _PolicyEntry) -> Evaluation:
    return Evaluation(verdict=_VERDICTS[entry.policy], reason=_policy_text(entry), source=entry.source)


def _policy_text(entry: _PolicyEntry | None) -> str:
    assert entry is not None
    return f"policy {entry.key} = {entry.policy} ({entry.source})"


def _by_rule(effect: Effect, rule: Rule, reason: str) -> Evaluation:
    return Evaluation(verdict=effect, reason=reason, rule=rule.raw, source=rule.source)


def _entries(
    policies: Mapping[str, Policy], source: str, *, defaults_named: bool = False
) -> list[_PolicyEntry]:
    """Entries for a mapping; with `defaults_named`, a built-in value left as is says "default"."""
    return [
        _PolicyEntry.of(
            key, policy, "default" if defaults_named and DEFAULT_POLICIES.get(key) == policy else source
        )
        for key, policy in policies.items()
    ]


_RESOLVED_KEPT = 4096


def _resolve(name: str, entries: list[_PolicyEntry]) -> _PolicyEntry | None:
    """The most specific entry for `name`: exact tool > glob > server; ties go to the stricter."""
    matching = [e for e in entries if e.selector.selects(name)]
    if not matching:
        return None
    return max(matching, key=lambda e: (e.rank, e.literal, _STRICTNESS[e.policy]))


class PolicySource(Protocol):
    """Where the gate reads the rules and policies in force, and where a standing allow goes.

    The gate never owns policy state: the host's `PolicyService` does (and writes the config
    file); a gate built without one gets an in-memory `FixedPolicy`.
    """

    @property
    def engine(self) -> PolicyEngine: ...

    def scoped_rules(self, scope: StandingScope) -> RuleSet | None:
        """The "always allow" rules kept for one workspace's (or named agent's) sessions."""
        ...

    def add_always_allow(self, rules: list[str], *, scope: StandingScope | None = None) -> None:
        """Add "always allow" rules for `scope`'s sessions (None: every session's, the global
        policy); idempotent (a rule already kept there changes nothing)."""
        ...


class FixedPolicy:
    """A PolicySource held in memory: a gate's own rules, for tests and embedded use."""

    def __init__(self, engine: PolicyEngine) -> None:
        self._engine = engine
        self._scoped = ScopedAllows()

    @property
    def engine(self) -> PolicyEngine:
        return self._engine

    def scoped_rules(self, scope: StandingScope) -> RuleSet | None:
        return self._scoped.rules_for(scope)

    def add_always_allow(self, rules: list[str], *, scope: StandingScope | None = None) -> None:
        if scope is not None:
            self._scoped.add(scope, rules)
            return
        known = {r.raw for r in self._engine.rules.allow}
        new = [r for r in rules if r not in known]
        if new:
            self._engine = self._engine.with_rules(RuleSet.from_config({"allow": new}, source="user"))
