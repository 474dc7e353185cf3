"""Rules that name no server, checked at the start and shown in Settings (issue 35, item 12).

The check itself is pure (backend/rules/rule_references.py); this service gathers what it needs:
the rules in force from overseer.yaml and the named agents, the configured servers (remote and
not yet started included) and the tools each server has listed so far.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from backend.agents import Agents
from backend.app.policy import PolicyService
from backend.config import ConfigError
from backend.mcp.config import BUILTIN_SERVERS
from backend.mcp.server import ServerStatus
from backend.rules.grammar import RuleSet
from backend.rules.rule_references import RuleFinding, ServerTools, check_rule_references, findings_text, unlisted_servers_named

log = logging.getLogger(__name__)


class RuleReferences:
    """Which rules cover no tool that exists here: warnings, and deny rules that are errors."""

    def __init__(
        self,
        *,
        policies: PolicyService,
        agents: Agents,
        configured: Callable[[], Collection[str]],
        statuses: Callable[[], list[ServerStatus]],
        intended: Collection[str] = (),
    ) -> None:
        """`configured()`: every configured server's name; `statuses()`: the pool's servers, whose
        tools count once the server is ready; `intended`: `deny_unmatched_ok`."""
        self._policies = policies
        self._agents = agents
        self._configured = configured
        self._statuses = statuses
        self._intended = tuple(intended)

    def servers(self) -> ServerTools:
        """Each configured server's listed tools (short names), None while it has not listed them."""
        listed: dict[str, Collection[str] | None] = {name: None for name in self._configured()}
        for status in self._statuses():
            listed[status.name] = {t.tool for t in status.tools} if status.state == "ready" else None
        return listed

    def rules(self) -> RuleSet:
        """The rules in force that a person wrote: overseer.yaml's and every named agent's."""
        own = RuleSet.from_config(self._policies.permissions.model_dump(), source="user")
        return RuleSet.concat(own, *(agent.rules for agent in self._agents.list()))

    def findings(self) -> list[RuleFinding]:
        """What the check finds now, errors first."""
        return check_rule_references(self.rules(), self.servers(), intended=self._intended)

    def awaited_servers(self) -> set[str]:
        """The built-in servers whose tool lists the start waits for: a deny rule names one of
        their tools (`mcp__memory__delete_entities` with the built-in memory server), and
        whether it covers anything is known only once they list them. Built-ins are local and
        quick to list; any other server not listed yet is checked by its name alone."""
        return unlisted_servers_named(self.rules(), self.servers(), among=BUILTIN_SERVERS, intended=self._intended)

    def check_at_start(self, *, warn: bool = True) -> None:
        """Log the warnings (with `warn`); ConfigError listing every deny rule that covers nothing
        (unless intended)."""
        findings = self.findings()
        errors = [f for f in findings if f.level == "error"]
        for finding in findings if warn else ():
            if finding.level == "warning":
                log.warning("%s", finding.message)
        if errors:
            raise ConfigError("deny rules that cover no tool here:\n" + findings_text(errors))
