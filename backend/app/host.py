"""The Host: one process's store, event bus, MCP pool, gate and runner, wired from Settings.

The CLI, the web API and the gateway all run agents through a Host. With no model configured
it starts the offline demo: the scripted model server from `backend.testing`, reached through
the same LiteLLM HTTP path a real provider takes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from backend.agents import Agents
from backend.app.agents_admin import AgentAdmin
from backend.app.approval_desks import ApprovalDesks
from backend.app.approvals import ApprovalService
from backend.app.cluster_links import ClusterLinks
from backend.app.auto_approve import AutoApprover
from backend.app.model_settings import ModelSettings
from backend.app.model_targets import DEMO_MODEL, ModelTargets
from backend.app.managed_policy import check_settings, load_managed_policy
from backend.domain.hook_config import merge_hooks
from backend.app.policy import PolicyService
from backend.app.server_configs import server_configs, skill_read_roots
from backend.app.server_watch import ServerWatch
from backend.app.servers import ServerFailures
from backend.app.server_sign_ins import ServerSignIns
from backend.app.servers_admin import ServerAdmin
from backend.app.session_edits import SessionEditor
from backend.app.services import Attached
from backend.app.sessions import SessionService
from backend.app.transport_services import transport_services
from backend.checkpoints.steps import Checkpointer
from backend.config import ConfigError, Settings
from backend.host_identity import remember_host_id
from backend.engine.budget import BudgetGuard, BudgetLimits
from backend.app.chat import Chat
from backend.engine.claude_sdk import ClaudeSdkEngine
from backend.engine.events import EventBus
from backend.engine.loop import LoopLimits
from backend.engine.models.model_map import close_litellm_sessions
from backend.engine.models.openai_direct import close_shared_client
from backend.engine.workspaces import WorkspaceRoots
from backend.engine.runner import SessionRunner
from backend.engine.models.sampling import Sampler, SamplingLimits
from backend.mcp.config import HostApi
from backend.mcp.connection import TransportFactory
from backend.mcp.pool import McpPool
from backend.mcp.tool_pins import ToolPins
from backend.mcp.remote import open_transport
from backend.modes.registry import ModeRegistry
from backend.paths import BUILTIN_MODES_DIR, BUILTIN_SKILLS_DIR
from backend.paths import private_dir
from backend.approvals.broker import ApprovalBroker
from backend.rules.bootstrap_guard import BootstrapGuard
from backend.rules.managed import NO_MANAGED_POLICY
from backend.rules.permission_modes import session_mode
from backend.app.rule_references import RuleReferences
from backend.approvals.confinement import Confinement
from backend.approvals.untrusted import UntrustedContent
from backend.sandbox.launcher import Sandbox, detect
from backend.approvals.gate import ToolGate
from backend.approvals.tool_hooks import HookChain
from backend.scheduler import Scheduler
from backend.skills.catalog import SkillCatalog
from backend.store.media import MediaStore
from backend.store.base import Store
from backend.store.postgres import PostgresStore
from backend.store.sqlite import SqliteStore
from backend.workflows.files import WorkflowLibrary
from backend.workflows.runner import WorkflowRunner

log = logging.getLogger(__name__)


class Host:
    """Owns every long-lived part of a running Overseer."""

    def __init__(
        self,
        settings: Settings,
        *,
        hooks: HookChain | None = None,
        pool: McpPool | None = None,
        host_api: HostApi | None = None,
        transport_factory: TransportFactory = open_transport,
    ) -> None:
        """`host_api`: where this host's HTTP API listens, for built-in servers that call it back.
        `transport_factory`: how the pool it makes reaches each server (the test harness runs
        Overseer's own servers in memory, backend/testing/in_process.py)."""
        self.managed = load_managed_policy()
        """The managed policy (issue 34, item 2): above every other layer; ManagedPolicyError stops the start."""
        check_settings(self.managed, settings)
        self.settings = settings
        self.host_api = host_api
        self.data_dir = settings.data_dir.expanduser()
        self.modes = ModeRegistry(BUILTIN_MODES_DIR, self.data_dir / "modes")
        self.skills = SkillCatalog(BUILTIN_SKILLS_DIR, self.data_dir / "skills")
        # OVERSEER_DATABASE_URL: the Postgres several hosts may share; without it, the embedded SQLite file.
        self.store: Store = (
            PostgresStore(settings.database_url.get_secret_value(), max_connections=settings.database_pool_size)
            if settings.database_url is not None
            else SqliteStore(settings.db_path)
        )
        self.media = MediaStore(self.data_dir / "media")
        """Images and audio of tool results, as files beside the database."""
        self.bus = EventBus(self.store)
        # A pool may be shared (tests, benchmarks); then it is started and closed by its owner.
        self._owns_pool = pool is None
        self.pool = pool or McpPool(
            server_configs(settings, host_api, self.managed), log_dir=self.data_dir / "logs", transport_factory=transport_factory
        )
        if self._owns_pool:  # a shared pool's owner decides whether its listings are checked
            # Tools pinned against silent change (issue 34): a changed tool asks until an admin accepts it.
            self.pool.pins = ToolPins(self.store)
        self.broker = ApprovalBroker(self.store, self.bus, timeout=settings.approval_timeout)
        self.approvals = ApprovalService(store=self.store, broker=self.broker, managed=self.managed)
        self.hooks = hooks or HookChain()
        self.models = ModelTargets(settings, default_model=lambda: self.runner.default_model)
        """Where each session's model requests go (the offline demo without a model configured)."""
        self.policies = PolicyService(settings, managed=self.managed)
        self.agents = Agents.from_settings(
            settings,
            servers=self.configured_server_names(),
            modes=[m.name for m in self.modes.list()],
        )
        """The named agents and the routes to them (issue 19); ConfigError for an unusable entry."""
        self.agent_admin = AgentAdmin(
            settings=settings,
            agents=self.agents,
            servers=self.configured_server_names,
            modes=lambda: [m.name for m in self.modes.list()],
        )
        """Agents as admins create and edit them, written to the config file and in force at once."""
        self.rule_references = RuleReferences(
            policies=self.policies,
            agents=self.agents,
            configured=self.configured_server_names,
            statuses=self.pool.statuses,
            intended=settings.deny_unmatched_ok,
        )
        self.rule_references.check_at_start()  # issue 35, item 12: a deny rule that covers nothing stops the start
        self.sandbox = Sandbox(detect(settings.sandbox.backend))
        """What confines commands here (bubblewrap, Landlock), or why nothing does."""
        self.untrusted = UntrustedContent(self.store, setting=lambda: self.policies.permissions.after_untrusted)
        """Outside text in results, and what may follow it (`permissions.after_untrusted`, issue 34)."""
        # A server's own requests (questions, sampling, a command's connection) asked in the calling session.
        self.desks = ApprovalDesks(
            broker=self.broker, sessions=self, data_dir=self.data_dir, untrusted=self.untrusted, sandbox=self.sandbox.status
        )
        self.elicitations, self.network, self.egress = self.desks.elicitations, self.desks.network, self.desks.egress
        bootstrap = BootstrapGuard.from_setting(settings.protect_bootstrap, data_dir=self.data_dir)
        self.checkpointer = Checkpointer(
            store=self.store,
            bus=self.bus,
            root=settings.checkpoints_dir,
            enabled=settings.checkpoints.enabled,
            max_file_bytes=int(settings.checkpoints.max_file_mb * 1024 * 1024),
            keep_last=settings.checkpoints.keep_last,
            keep_days=settings.checkpoints.keep_days,
        )
        """The workspace before each step that may change it, and their retention (issue 32)."""
        self.gate = ToolGate(
            policy=self.policies,
            broker=self.broker,
            store=self.store,
            bus=self.bus,
            tools=self.pool,
            sessions=self,  # type: ignore[arg-type]  # forwarded to the runner below
            hooks=self.hooks,
            media=self.media,
            bootstrap=bootstrap,
            confinement=Confinement(
                sandbox=self.sandbox,
                data_dir=self.data_dir,
                hidden=(settings.checkpoints_dir,),
                read_only=(*skill_read_roots(settings), *settings.sandbox.read_only),
                instruction_files=bootstrap.files,
                auto_allow=settings.sandbox.auto_allow,
                allow_unconfined=settings.sandbox.allow_unconfined and not self.managed.disable_unsandboxed,
                egress=self.egress,
                allowlist_patterns=tuple(settings.sandbox.network.allow),
                network_on=settings.sandbox.network.on,
            ),
            checkpoints=self.checkpointer if settings.checkpoints.enabled else None,
            hook_config=merge_hooks(self.managed.hooks, settings.hooks),  # the managed policy's first: they always run
            untrusted=self.untrusted,
        )
        self.claude_sdk = ClaudeSdkEngine(
            store=self.store,
            bus=self.bus,
            gate=self.gate,
            data_dir=self.data_dir,
            target=self.models.sdk_target_for,
            setting_sources=settings.claude_sdk_setting_sources,
        )
        known_secrets = [settings.api_key.get_secret_value()] if settings.api_key else []
        if host_api is not None:
            known_secrets.append(host_api.token)
        self.budget = BudgetGuard(limits=BudgetLimits(**settings.budget.model_dump()), store=self.store, bus=self.bus)
        """Spending limits (settings.budget) and today's spend, for the runner and GET /api/spend."""
        self.runner = SessionRunner(
            store=self.store,
            bus=self.bus,
            gate=self.gate,
            list_tools=lambda: self.server_watch.ready_tools(),
            model_for=self.models.model_for,
            limits=LoopLimits(max_iterations=settings.max_iterations, tool_concurrency=settings.tool_concurrency),
            default_workspace=settings.resolved_workspace,
            default_model=settings.model or DEMO_MODEL,
            memory_window=settings.memory_window,
            modes=self.modes,
            skills=self.skills,
            data_dir=self.data_dir,
            claude_sdk=self.claude_sdk,
            default_engine=settings.default_engine,
            secrets=known_secrets,
            tool_selection=settings.tool_selection,
            agents=self.agents,
            budget=self.budget,
        )
        self.runner.session_mode = lambda: session_mode(self.policies.permissions.defaultMode)
        self.runner.workspaces = WorkspaceRoots(
            roots=settings.all_workspace_roots,
            configured=self.runner.configured_workspaces,
            data_dir=self.data_dir,
            config_file=settings.config_file,
        )
        """Where sessions may work (issue 31): under workspace_roots, an agent's or the default workspace."""
        self.runs: Any = None
        """With a shared Postgres: the DBOS placement of runs on hosts (backend/cluster/dbos_runs.py)."""
        if settings.database_url is not None:
            from backend.cluster.dbos_runs import DbosPlacement  # dbos is imported only where it is used

            self.runs = DbosPlacement(
                runner=self.runner,
                database_url=settings.database_url.get_secret_value(),
                host_id=settings.host_id,
                max_runs=settings.max_runs_per_host,
                pool_size=settings.dbos_pool_size,
            )
            self.runner.placement = self.runs
        self.model_settings = ModelSettings(settings=settings, runner=self.runner, data_dir=self.data_dir, demo_model=DEMO_MODEL)
        """The model chosen in the dashboard, laid over the configuration (here, and at once when changed)."""
        self.chat = Chat(self.runner)
        # A server's `sampling/createMessage` runs on the calling session's model once a person allows it.
        self.sampler = Sampler(
            desk=self.desks.sampling,
            bus=self.bus,
            session_of=self.store.get_session,
            mode_of=lambda session: self.modes.get(session.mode),
            model_for=self.models.sampling_model_for,
            add_usage=self.runner.add_usage,
            limits=SamplingLimits(policy=settings.sampling, max_tokens=settings.sampling_max_tokens),
        )
        self.desks.serve(self.pool, sample=self.sampler.sample)
        self.server_failures = ServerFailures(
            pool=self.pool, bus=self.bus, store=self.store, is_running=self.runner.is_running
        )
        self.server_watch = ServerWatch(pool=self.pool, failures=self.server_failures, rule_references=self.rule_references)
        self._watching_servers: asyncio.Task[None] | None = None
        self.servers = ServerAdmin(settings=settings, pool=self.pool, sandbox=self.sandbox.status, managed=self.managed)
        """The servers as the dashboard shows and changes them, with their live feed."""
        self.sessions = SessionService(
            store=self.store,
            runner=self.runner,
            chat=self.chat,
            broker=self.broker,
            max_agent_depth=settings.max_agent_depth,
        )
        self.links: ClusterLinks | None = None
        """With a shared Postgres: events, approval answers and stops heard from the other hosts."""
        if isinstance(self.store, PostgresStore):
            self.links = ClusterLinks(store=self.store, bus=self.bus, broker=self.broker, runner=self.runner)
            self.sessions.stop_elsewhere = self.links.stop_elsewhere
        self.auto_approver = AutoApprover(
            store=self.store, bus=self.bus, approvals=self.approvals, broker=self.broker, managed=self.managed
        )
        """Answers the asks of sessions whose auto-approve switch is on, in the name of who turned it on."""
        self.session_edits = SessionEditor(store=self.store, runner=self.runner, auto=self.auto_approver)
        self.scheduler = Scheduler(
            self.store, self.runner, catch_up=settings.cron_catch_up, agents=self.agents, workspaces=self.runner.workspaces
        )
        self.attached: list[Attached] = []
        """Channels (Telegram, push, heartbeat), added by `backend.channels.attach`: started last, stopped first."""
        self.workflows = WorkflowRunner(
            store=self.store,
            bus=self.bus,
            runner=self.runner,
            broker=self.broker,
            library=WorkflowLibrary(user_dir=self.data_dir / "workflows"),
            modes=self.modes,
        )
        self.sign_ins = ServerSignIns(self.pool)
        """Sign-ins to remote servers begun from the dashboard, abandoned when the host stops."""
        self.app_services = transport_services(self)
        """What the transports get: the app's services, never the Host (backend/app/services.py)."""

    def configured_server_names(self) -> set[str]:
        """Every server configured here, the ones the managed allow-list keeps from starting too (an
        agent or rule naming one is valid; its sessions just never get that server), and the pool's."""
        configured = server_configs(self.settings, self.host_api, NO_MANAGED_POLICY)
        return {*configured, *(status.name for status in self.pool.statuses())}

    @property
    def is_demo(self) -> bool:
        return self.settings.model is None

    async def start(self, *, recover: bool = True) -> None:
        """Open the store, start MCP servers in the background, resume interrupted sessions."""
        private_dir(self.data_dir)
        remember_host_id(self.data_dir, self.settings.host_id)
        log.info("host %s starting", self.settings.host_id)
        await self.store.open()
        if self.links is not None:  # before recovery, so what it publishes reaches the other hosts' feeds
            await self.links.start()
        if self._owns_pool:
            await self.pool.start()
        await self._check_rules_once_listed()
        # Start failures reach stderr even while no session runs (`serve`, `mcp`).
        self._watching_servers = asyncio.create_task(self.server_watch.report_start_failures(), name="mcp-start-failures")
        if self.is_demo:
            self.models.demo_server()
        if self.runs is not None:  # before recovery: DBOS takes back this host's own runs as it starts
            await self.runs.start()
        await self.auto_approver.start()
        await self.checkpointer.start()
        if recover:
            await self.desks.withdraw_server_requests()
            await self.runner.recover()
            # After the sessions, so a step's session is found running and is waited for.
            await self.workflows.recover()
            # After recovery, so a job's interrupted run is found running, not fired again.
            if self.settings.scheduler_enabled:
                await self.scheduler.start()
        for service in self.attached:  # after recovery, so they see the approvals still waiting
            await service.start()

    async def _check_rules_once_listed(self) -> None:
        """A deny rule that covers nothing, once the servers it names have listed, stops the start."""
        try:
            await self.server_watch.check_rules_once_listed()
        except ConfigError:
            await self.aclose()
            raise

    @property
    def closing(self) -> bool:
        """True once a shutdown has begun: cancellations from then on end no run and no approval."""
        return self.gate.shutting_down

    def begin_shutdown(self) -> None:
        """Say that the process is going away, before anything is cancelled or any connection closes.

        A shutdown, graceful or not, never ends a pending approval: runs, tool calls and approvals
        stay as stored, for the next start to recover.
        """
        self.gate.shutting_down = True

    async def aclose(self) -> None:
        self.begin_shutdown()
        for service in reversed(self.attached):
            await service.aclose()
        await self.sign_ins.aclose()
        await self.scheduler.aclose()
        await self.workflows.aclose()
        await self.auto_approver.aclose()
        await self.runner.aclose()
        await self.gate.configured_hooks.aclose()  # notification hooks still running, each bounded by its timeout
        await self.checkpointer.aclose()  # after the runner: no step takes one any more
        if self.runs is not None:  # after the runner: its runs ended as a shutdown, their workflows stay pending
            await self.runs.aclose()
        if self._watching_servers is not None:
            self._watching_servers.cancel()
            await asyncio.wait({self._watching_servers})
        if self._owns_pool:
            await self.pool.aclose()
        else:  # a shared pool outlives this host: it must not ask its approvals any more
            self.desks.leave(self.pool)
        await self.desks.aclose()  # the egress proxy, after the commands using it have ended
        await close_shared_client()  # the model's HTTP connections, after every run has ended
        await close_litellm_sessions()  # and LiteLLM's, whose aiohttp sessions would otherwise outlive the loop
        self.models.stop_demo()
        if self.links is not None:
            await self.links.aclose()
        await self.store.close()

    async def __aenter__(self) -> Host:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # forwarded SessionSink, so the gate exists before the runner

    async def approval_waiting(self, session_id: str, delta: int) -> None:
        await self.runner.approval_waiting(session_id, delta)

    async def add_session_rules(self, session_id: str, rules: list[str]) -> None:
        await self.runner.add_session_rules(session_id, rules)
