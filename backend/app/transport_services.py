"""What the transports get of a host: its AppServices, with the services only they use.

The host builds the parts a run needs (store, pool, gate, runner, sessions...). The transports'
own services (standing rules, the audit, spend, checkpoints, tool pins, direct tool calls...)
are built here from those parts, once, with the value that hands them out (backend/app/services.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from backend.agents import Agents
from backend.app.agent_routes import AgentRoutes
from backend.app.agents_admin import AgentAdmin
from backend.app.approvals import ApprovalService
from backend.app.audit import AuditLog
from backend.app.checkpoints import CheckpointService
from backend.app.direct_tools import DirectTools
from backend.app.heartbeat_runs import HeartbeatRuns
from backend.app.model_settings import ModelSettings
from backend.app.policy import PolicyService
from backend.app.gateway_tasks import GatewayTaskService
from backend.app.rule_references import RuleReferences
from backend.app.server_sign_ins import ServerSignIns
from backend.app.servers_admin import ServerAdmin
from backend.app.services import AppServices, Lifecycle
from backend.app.session_edits import SessionEditor
from backend.app.sessions import SessionService
from backend.app.spend import SpendReport
from backend.app.standing import Standing
from backend.app.tool_pins import ToolPinService
from backend.approvals.gate import ToolGate
from backend.checkpoints.steps import Checkpointer
from backend.config import Settings
from backend.engine.budget import BudgetGuard
from backend.engine.events import EventBus
from backend.engine.runner import SessionRunner
from backend.mcp.pool import McpPool
from backend.modes.registry import ModeRegistry
from backend.sandbox.launcher import Sandbox
from backend.scheduler import Scheduler
from backend.skills.catalog import SkillCatalog
from backend.store.base import Store
from backend.workflows.runner import WorkflowRunner


class HostParts(Lifecycle, Protocol):
    """What is read here of the host (backend/app/host.py, which imports this module)."""

    settings: Settings
    data_dir: Path
    store: Store
    bus: EventBus
    pool: McpPool
    gate: ToolGate
    runner: SessionRunner
    checkpointer: Checkpointer
    budget: BudgetGuard
    sandbox: Sandbox
    sessions: SessionService
    session_edits: SessionEditor
    approvals: ApprovalService
    servers: ServerAdmin
    policies: PolicyService
    model_settings: ModelSettings
    agents: Agents
    agent_admin: AgentAdmin
    modes: ModeRegistry
    skills: SkillCatalog
    scheduler: Scheduler
    workflows: WorkflowRunner
    sign_ins: ServerSignIns
    rule_references: RuleReferences


def transport_services(host: HostParts) -> AppServices:
    """The host's services as a transport may use them; the host itself only as its lifecycle."""
    return AppServices(
        settings=host.settings,
        data_dir=host.data_dir,
        lifecycle=host,
        sessions=host.sessions,
        session_edits=host.session_edits,
        approvals=host.approvals,
        servers=host.servers,
        policies=host.policies,
        model_settings=host.model_settings,
        agents=host.agents,
        agent_admin=host.agent_admin,
        modes=host.modes,
        skills=host.skills,
        standing=Standing(
            store=host.store, modes=host.modes, policies=host.policies, tools=host.pool.tools, agents=host.agents
        ),
        audit=AuditLog(host.store),
        spend=SpendReport(host.store, host.budget),
        schedules=host.scheduler,
        workflows=host.workflows,
        sign_ins=host.sign_ins,
        sandbox=host.sandbox.status,
        events=host.bus,
        agent_routes=AgentRoutes(host.agents),
        heartbeat_runs=HeartbeatRuns(store=host.store, sessions=host.sessions),
        checkpoints=CheckpointService(
            store=host.store, checkpointer=host.checkpointer, runner=host.runner, bus=host.bus, sessions=host.sessions
        ),
        checkpoints_usage=host.checkpointer.usage,
        tool_pins=ToolPinService(pool=host.pool, store=host.store),
        rule_references=host.rule_references,
        gateway_tasks=GatewayTaskService(host.store),
        direct_tools=DirectTools(
            settings=host.settings,
            pool=host.pool,
            store=host.store,
            bus=host.bus,
            gate=host.gate,
            runner=host.runner,
            modes=host.modes,
            sessions=host.sessions,
        ),
    )
