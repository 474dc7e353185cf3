"""What runs without asking in one session: the standing rules a person should see above the composer.

Worked out from the policy owner (the rules and policies in force), the session's mode (its tools and
its policies, which come first) and the session's own "allow for this session" rules, the same
inputs the gate evaluates. Listed per tool, without arguments: a tool whose policy is
`always_allow` (or a read-only tool of a trusted server, where that is switched on) runs unasked
unless a deny or ask rule catches the call; an allow rule runs the calls it matches. A session of
an agent limited to some servers lists only those servers' tools and the rules that reach them,
with the agent's own allow rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from backend.agents import Agent, Agents
from backend.domain.models import Session, StandingScope
from backend.domain.tools import ToolInfo
from backend.app.policy import PolicyService
from backend.modes.model import Mode
from backend.modes.registry import ModeRegistry
from backend.rules.policy_engine import PolicyEngine, ToolCallView, is_read_only
from backend.store.base import Store


class StandingRule(BaseModel):
    """An allow rule in force, and where it comes from (config, user, project, session, ...)."""

    rule: str
    source: str


class StandingRules(BaseModel):
    """What the session may run without asking anybody."""

    mode: str
    allow_rules: list[StandingRule]
    """Allow rules: the calls they match run unasked (a deny or ask rule still wins)."""
    tools: list[str]
    """Full names of the tools that run unasked whatever their arguments (their policy, or read-only
    auto-allow), unless a deny or ask rule catches the call."""
    no_writes: bool = False
    """Plan mode: nothing that writes runs unasked, whatever the rules say."""


def standing_rules(
    session: Session,
    mode: Mode,
    engine: PolicyEngine,
    tools: list[ToolInfo],
    scoped: list[str] | None = None,
    agent: Agent | None = None,
) -> StandingRules:
    """The standing rules of `session` in `mode`, over the tools there are now; `scoped`: the
    "always allow" rules kept for its workspace (or named agent); `agent`: the session's agent,
    whose servers (when it is limited to some) bound what is listed, as they bound what it is offered."""
    if agent is not None:
        tools = [t for t in tools if agent.offers_server(t.server)]
    offered = mode.offered_tools(tools)
    allow = list(engine.rules.allow) + (agent.rules.rules("allow") if agent is not None and agent.rules else [])
    rules = [
        StandingRule(rule=r.raw, source=r.source)
        for r in allow
        if not r.carve_out and (agent is None or _reaches(agent, r.tools.literal_server))
    ]
    if scoped:
        where = StandingScope.of_session(session.workspace, session.agent_id)
        rules += [StandingRule(rule=r, source=where.label) for r in scoped]
    rules += [StandingRule(rule=r, source="session") for r in session.session_rules]
    plan = mode.name == "plan"
    unasked = []
    for tool in offered:
        policy = engine.policy_for(tool.name, mode.policies)
        read_only = tool.annotations.readOnlyHint is True and tool.annotations.destructiveHint is not True
        auto = policy is None and engine.read_only_auto_allow and tool.server in engine.trusted_servers and read_only
        # issue 34: allow_read_only_tools lets a third-party read run while its tool is as pinned
        auto = auto or (policy is None and engine.effective_policy(tool.name, tool.annotations) == "always_allow")
        auto = auto and tool.changed is None
        if (policy == "always_allow" or auto) and not engine.managed_catches(tool.name):
            view = ToolCallView(name=tool.name, arguments={}, workspace=Path(session.workspace), annotations=tool.annotations)
            if plan and not is_read_only(view):
                continue
            unasked.append(tool.name)
    return StandingRules(mode=mode.name, allow_rules=rules, tools=unasked, no_writes=plan)


def _reaches(agent: Agent, server: str | None) -> bool:
    """Whether an allow rule confined to `server` can match a call of `agent`'s sessions (a rule
    spanning several servers is kept: it may reach one the agent has)."""
    return server is None or agent.offers_server(server)


class Standing:
    """A session's standing rules, read from its mode, the policies and the tools there are now."""

    def __init__(
        self,
        *,
        store: Store,
        modes: ModeRegistry,
        policies: PolicyService,
        tools: Callable[[], list[ToolInfo]],
        agents: Agents | None = None,
    ) -> None:
        self._store = store
        self._modes = modes
        self._policies = policies
        self._tools = tools
        self._agents = agents

    async def of(self, session_id: str) -> StandingRules:
        session = await self._store.get_session(session_id)
        scoped = self._policies.scoped_rule_texts(StandingScope.of_session(session.workspace, session.agent_id))
        agent = self._agents.get(session.agent_id) if self._agents is not None else None
        engine = self._policies.engine
        return standing_rules(session, self._modes.get(session.mode), engine, self._tools(), scoped, agent)
