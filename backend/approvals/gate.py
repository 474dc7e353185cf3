"""The one road to a tool: evaluate, ask, record, then run.

Every engine hands each tool call to the gate, in one step (`ToolGate.run`, the LiteLLM engine)
or in two (`decide`, then `execute`: the Claude Agent SDK engine decides in its `can_use_tool`
callback and runs the call when the CLI reaches the proxied tool). Either way the decisions,
audit rows, records and events are the same. A tool runs only after an allow decision: `execute`
refuses a call `decide` did not allow, and the allow is written to the audit log before the
tool starts. Denials, hook blocks and timeouts come back to the model as error results it can
act on, never as exceptions. This module decides; running an allowed call and recording every
call's end are in `backend/approvals/gate_running.py` (the gate's base class).

See docs/architecture.md (the life of an approval).
"""

from __future__ import annotations

import asyncio
from functools import partial

from backend.domain.models import (
    OVERSEER,
    Approval,
    AuditEntry,
    DecidedBy,
    Decider,
    Decision,
    ToolCallRecord,
    utcnow,
)
from backend.domain.stakes import CarriedResult
from backend.domain.tools import ToolResult
from backend.rules import bootstrap_guard
from backend.approvals.broker import ApprovalBroker
from backend.domain.errors import ApprovalError
from backend.rules.bootstrap_guard import BootstrapGuard, InstructionChange
from backend.approvals.confinement import Confinement, UnconfinedRun
from backend.approvals.gate_running import STOPPED, GateRunning
from backend.approvals.gate_types import (
    CHANGED,
    ERROR_HINT,
    INTERRUPTED,
    NOT_DECIDED,
    GateBus,
    GateCall,
    GateDecision,
    GateSession,
    ProgressCallback,
    SessionSink,
    StepCheckpoints,
    ToolRunner,
)
from backend.approvals.tool_hooks import ToolHooks
from backend.approvals.untrusted import UntrustedContent
from backend.approvals.result_taint import ResultTaint, carried_review, escalates
from backend.approvals.stakes_card import card_details
from backend.approvals.configured_hooks import ConfiguredHooks, HookAllow
from backend.approvals.hook_gate import evaluate_with_hooks, hook_decider, place_of, sandbox_prefix
from backend.domain.hook_config import HooksConfig
from backend.rules.narrow import narrow_rules_for
from backend.rules.policy_engine import Evaluation, FixedPolicy, PolicyEngine, PolicySource, ToolCallView
from backend.rules.grammar import RuleSet
from backend.store.base import Store
from backend.store.media import MediaStore

__all__ = [  # the gate's values live in gate_types and gate_running; importers of the gate find them here too
    "CHANGED",
    "ERROR_HINT",
    "INTERRUPTED",
    "NOT_DECIDED",
    "STOPPED",
    "GateBus",
    "GateCall",
    "GateDecision",
    "GateSession",
    "ProgressCallback",
    "SessionSink",
    "StepCheckpoints",
    "ToolGate",
    "ToolRunner",
]


class ToolGate(GateRunning):
    """Decides and runs tool calls; the only place a tool is started."""

    def __init__(
        self,
        *,
        policy: PolicySource | PolicyEngine,
        broker: ApprovalBroker,
        store: Store,
        bus: GateBus,
        tools: ToolRunner,
        sessions: SessionSink,
        hooks: ToolHooks | None = None,
        media: MediaStore | None = None,
        bootstrap: BootstrapGuard | None = None,
        confinement: Confinement | None = None,
        checkpoints: StepCheckpoints | None = None,
        hook_config: HooksConfig | None = None,
        untrusted: UntrustedContent | None = None,
    ) -> None:
        """`policy`: the host's PolicyService, or an engine the gate then keeps in memory.
        `media`: where results' images and audio are kept; without it only their text is.
        `bootstrap`: which instruction files always ask (default: all of them, see bootstrap_guard).
        `confinement`: makes the sandbox of every command; without it a host-launched shell server
        refuses to run commands (it never runs one unconfined unless told so).
        `checkpoints`: takes the workspace's checkpoint before each step that may change it
        (issue 32); without it no step gets one.
        `hook_config`: Claude Code-style hooks (backend/approvals/configured_hooks.py).
        `untrusted`: outside text in results, and `permissions.after_untrusted` (issue 34)."""
        self.policies: PolicySource = FixedPolicy(policy) if isinstance(policy, PolicyEngine) else policy
        self.broker = broker
        self.store = store
        self.bus = bus
        self.tools = tools
        self.sessions = sessions
        self.hooks = hooks or ToolHooks()
        self.media = media
        self.bootstrap = bootstrap if bootstrap is not None else BootstrapGuard()
        self.confinement = confinement
        self.checkpoints = checkpoints
        self.untrusted = untrusted if untrusted is not None else UntrustedContent(store)
        self.configured_hooks = ConfiguredHooks(
            hook_config,
            sandbox=sandbox_prefix(confinement, lambda: self.policy) if confinement is not None else None,
            report=lambda session_id, text: self.bus.publish(session_id, "notice", {"command": "hook", "text": text}),
        )
        """The configured hooks; the session runner runs their session events too."""
        self.result_taint = ResultTaint()
        """Pieces of each session's tool results, found again in later calls' arguments (issue 34)."""
        self.shutting_down = False
        """Set on host shutdown: cancelled calls are then left as stored, for recovery."""
        self._allowed: dict[tuple[str, str], GateDecision] = {}
        """The ledger: calls `decide` allowed that have not run yet, by (session id, call id)."""
        self.stoppers: dict[str, Decider] = {}
        """Who is stopping a session's run, while the stop is under way (the runner's `stop`): the
        calls it cuts short are recorded as stopped by them."""

    @property
    def policy(self) -> PolicyEngine:
        """The rules and policies in force now, read from their owner at every call."""
        return self.policies.engine

    def evaluate(self, session: GateSession, view: ToolCallView) -> Evaluation:
        session_rules = RuleSet.from_config({"allow": session.rules}, source="session") if session.rules else None
        scoped = self.policies.scoped_rules(session.standing_scope)  # "always allow" for this workspace/agent
        if session.agent_rules is not None or scoped is not None:
            session_rules = RuleSet.concat(session.agent_rules, scoped, session_rules)
        evaluation = self.policy.evaluate(
            view, session_rules=session_rules, mode=session.mode, mode_policies=session.mode_policies
        )
        if self.confinement is not None:
            evaluation = self.confinement.review(view.name, evaluation, session.sandbox)  # sandbox.auto_allow
        evaluation = self.bootstrap.review(view, evaluation)  # instruction files ask whatever allows them
        if session.fence is not None:
            evaluation = session.fence.review(view, evaluation)
        if self.confinement is not None:  # a command outside the sandbox asks, once, whatever allows it
            evaluation = self.confinement.review_outside(view.name, view.arguments, evaluation)
        # after_untrusted: ask (issue 34): a call that could send data out asks once outside text came in
        return self.untrusted.review(session.session_id, view, evaluation)

    async def run(self, session: GateSession, call: GateCall) -> ToolResult:
        """Decide, ask if needed, record, run; always returns a result and finishes the record."""
        decision = await self.decide(session, call)
        if decision.result is not None:
            return decision.result
        return await self.execute(session, GateCall(id=call.id, name=call.name, arguments=decision.arguments))

    async def decide(self, session: GateSession, call: GateCall) -> GateDecision:
        """Evaluate a call and ask a person if the rules say so; nothing runs here.

        A refusal is recorded at once (audit row, tool message, `tool.result`). An allow waits
        in the ledger for `execute`, which writes it to the audit log as the tool starts.
        """
        record = ToolCallRecord(id=call.id, session_id=session.session_id, name=call.name, arguments=call.arguments)
        approval: Approval | None = None
        try:
            if call.argument_error:
                return await self._refuse(record, ToolResult.error(call.argument_error), status="error")
            info = self.tools.tool(call.name)
            if info is None or (session.offered is not None and call.name not in session.offered):
                names = [t.name for t in self.tools.tools() if session.offered is None or t.name in session.offered]
                known = ", ".join(sorted(names)) or "none"
                what = "Unknown tool" if info is None else f"The {session.mode} mode does not offer the tool"
                return await self._refuse(
                    record, ToolResult.error(f"{what} {call.name!r}. Available tools: {known}."), status="error"
                )
            view = ToolCallView(
                name=call.name,
                arguments=call.arguments,
                workspace=session.workspace,
                annotations=info.annotations,
                changed=info.changed,  # issue 34: a tool changed since it was pinned asks
            )
            await self.untrusted.load(session.session_id)  # the session's outside text so far, for evaluate
            blocked = await self.hooks.before_tool(session_id=session.session_id, call=view)
            if blocked is not None:
                await self._audit(record, "deny", "hook", blocked.message)
                return await self._refuse(record, ToolResult.error(f"Blocked by a hook: {blocked.message}"), "denied")

            hooked = await evaluate_with_hooks(
                self.configured_hooks, session, call.id, view, partial(self.evaluate, session)
            )
            evaluation, record.arguments = hooked.evaluation, view.arguments
            carried = self.result_taint.find(session.session_id, view.arguments)  # a result's text going out
            evaluation = carried_review(view, evaluation, carried, self.policy.trusted_servers)
            unprotect: tuple[str, ...] = ()
            outside = False
            decided_by: DecidedBy = "hook" if evaluation.source == "hook" else "rule" if evaluation.rule else "policy"
            if call.resumed and evaluation.verdict != "ask":
                await self._close_stale_approval(record, evaluation, decided_by)
            if evaluation.verdict == "deny":
                await self._audit(record, "deny", decided_by, evaluation.reason, decider=_hook_decider(evaluation))
                record.decision = _denied_by(evaluation)
                return await self._refuse(record, ToolResult.error(f"Denied: {evaluation.reason}."), "denied")
            if evaluation.verdict == "ask":
                approval, decision_by = await self._ask(session, record, view, evaluation, carried)
                assert approval.decision is not None
                decision = bootstrap_guard.as_once(evaluation, approval.decision)
                if isinstance(evaluation, UnconfinedRun) and decision.kind in ("allow_session", "allow_always"):
                    decision = decision.model_copy(update={"kind": "allow_once", "rules": None})
                decider = approval.decider or OVERSEER
                latency = (approval.decided_at or utcnow()) - approval.created_at
                if not decision.allows:
                    detail = decision.message or "denied"
                    await self._audit(record, "deny", decision_by, detail, latency.total_seconds() * 1000, decider)
                    said = f" They said: {decision.message}" if decision.message else ""
                    verb = "timed out" if decision_by == "timeout" else "was denied by the person"
                    return await self._refuse(record, ToolResult.error(f"This tool call {verb}.{said}"), "denied")
                if decision.updated_arguments is not None:
                    record.arguments = view.arguments = decision.updated_arguments
                    again = bootstrap_guard.recheck(evaluation, self.evaluate(session, view), view.arguments)
                    if isinstance(again, UnconfinedRun) and not isinstance(evaluation, UnconfinedRun):
                        reason = "the edited call would run outside the sandbox, which the question did not ask"
                        again = Evaluation(verdict="deny", reason=reason, source="sandbox")
                    if again.verdict == "deny":
                        await self._audit(record, "deny", "rule", f"edited arguments: {again.reason}", decider=decider)
                        return await self._refuse(record, ToolResult.error(f"Denied: {again.reason}."), "denied")
                await self._apply_standing_decision(session, view, decision)
                if isinstance(evaluation, InstructionChange):  # this one command may change them
                    unprotect = evaluation.files
                outside = isinstance(evaluation, UnconfinedRun)
                auto = decider.via == "auto"  # the session's auto-approve switch, in this person's name
                record.decision = f"auto-approved by {decider.name}" if auto else f"{decision.kind} ({decision_by})"
                # The row keeps the arguments that ran; the detail says a person changed them.
                detail = decision.kind + (", allowed with edits" if decision.updated_arguments is not None else "")
                allow = AuditEntry.of(record, "allow", decision_by, detail, latency.total_seconds() * 1000, decider)
            else:
                record.decision = evaluation.reason
                allow = AuditEntry.of(record, "allow", decided_by, evaluation.reason, decider=_hook_decider(evaluation))
            if hooked.rewritten_by is not None:  # the row keeps the arguments that run; the detail says who changed them
                allow.detail += f" (arguments rewritten by {hooked.rewritten_by})"
            allowed = GateDecision(record=record, view=view, allow=allow, unprotect=unprotect, outside=outside)
            self._allowed[(session.session_id, call.id)] = allowed
            return allowed
        except asyncio.CancelledError:
            if not self.shutting_down:
                await asyncio.shield(self._stopped(record, approval))
            raise

    async def execute(self, session: GateSession, call: GateCall) -> ToolResult:
        """Run a call `decide` allowed, with exactly the arguments it allowed.

        Any other call is refused and recorded as denied, never run: one nobody decided on, or
        one whose arguments changed since. Always returns a result and finishes the record.
        """
        decided = self._allowed.pop((session.session_id, call.id), None)
        if decided is None or decided.arguments != call.arguments:
            attempted = ToolCallRecord(
                id=call.id, session_id=session.session_id, name=call.name, arguments=call.arguments
            )
            detail = NOT_DECIDED if decided is None else CHANGED
            await self._audit(attempted, "deny", "policy", detail)
            if decided is not None:  # the allowed call is over too: its own record says why
                return await self._finish(decided.record, ToolResult.error(detail), "denied")
            if any(r.id == call.id for r in await self.store.list_tool_calls(session.session_id)):
                return ToolResult.error(detail + ERROR_HINT)  # a call already on record keeps its record
            return await self._finish(attempted, ToolResult.error(detail), "denied")
        assert decided.view is not None and decided.allow is not None
        try:
            return await self._execute(
                session, decided.record, decided.view, decided.allow, decided.unprotect, outside=decided.outside
            )
        except asyncio.CancelledError:
            if not self.shutting_down:
                await asyncio.shield(self._stopped(decided.record, None))
            raise

    async def settle_unrun(self, session: GateSession, call: GateCall, result: ToolResult) -> None:
        """Record the end of a call the engine saw but the gate will never run.

        For the SDK engine: a call its CLI ended by itself (bad input, an interrupt) after or
        without a decision. An allowed call still in the ledger leaves it, unrun.
        """
        decided = self._allowed.pop((session.session_id, call.id), None)
        record = decided.record if decided is not None else ToolCallRecord(
            id=call.id, session_id=session.session_id, name=call.name, arguments=call.arguments
        )
        await self._finish(record, result, "error" if result.is_error else "done")

    def pending_decisions(self, session_id: str) -> list[str]:
        """Ids of the session's allowed calls that have not run yet."""
        return [call_id for (sid, call_id) in self._allowed if sid == session_id]

    async def _ask(
        self,
        session: GateSession,
        record: ToolCallRecord,
        view: ToolCallView,
        evaluation: Evaluation,
        carried: list[CarriedResult] | None = None,
    ) -> tuple[Approval, DecidedBy]:
        approval = await self.broker.latest_for_call(session.session_id, record.id)
        if approval is not None and approval.status not in ("pending", "cancelled"):
            return approval, approval.decided_by or "user"  # answered before a restart
        outside = isinstance(evaluation, UnconfinedRun)
        # The session shows "waiting" before anyone can see the request, never after.
        await self.sessions.approval_waiting(session.session_id, +1)
        try:
            record.status = "waiting_approval"
            await self.store.save_tool_call(record)
            if approval is None or approval.status == "cancelled":
                once = outside or isinstance(evaluation, InstructionChange)
                card = card_details(
                    view, evaluation, carried or [], standing=not once, trusted_servers=self.policy.trusted_servers
                )
                approval = await self.broker.open(
                    session_id=session.session_id,
                    tool_call_id=record.id,
                    tool_name=record.name,
                    arguments=record.arguments,
                    annotations=view.annotations,
                    reason=card.reason,
                    suggested_rules=[] if outside else bootstrap_guard.suggested_rules(evaluation, view),
                    always_scope=session.standing_scope,
                    kind="unconfined" if outside else "tool",
                    tool_change=view.changed,
                    stakes=card.stakes,
                    carried_results=card.carried_results,
                    argument_rules=card.argument_rules,
                )
                self.configured_hooks.notification(
                    place_of(session), message=f"Overseer needs your permission to use {record.name}"
                )
            approval = await self.broker.wait(approval.id)
        finally:
            await asyncio.shield(self.sessions.approval_waiting(session.session_id, -1))
        return approval, approval.decided_by or "user"

    async def _apply_standing_decision(self, session: GateSession, view: ToolCallView, decision: Decision) -> None:
        if decision.kind not in ("allow_session", "allow_always"):
            return
        rules = decision.rules if decision.rules is not None else narrow_rules_for(view)
        if not rules:
            return
        session.rules.extend(r for r in rules if r not in session.rules)
        if decision.kind == "allow_session":
            await self.sessions.add_session_rules(session.session_id, rules)
        else:  # the door said where (global only for an admin); unsaid, it stays with this workspace/agent
            self.policies.add_always_allow(rules, scope=None if decision.scope == "global" else session.standing_scope)
        await self._answer_covered(session)

    async def _close_stale_approval(self, record: ToolCallRecord, evaluation: Evaluation, by: DecidedBy) -> None:
        """An approval left pending by an earlier run, for a call the rules now decide by themselves.

        Closed with the rules' verdict, so the inbox never shows a question about a call that
        has already run (or been refused), and a late answer to it is refused as closed.
        """
        approval = await self.broker.latest_for_call(record.session_id, record.id)
        if approval is None or approval.status != "pending":
            return
        kind = "allow_once" if evaluation.verdict == "allow" else "deny"
        decision = Decision(kind=kind, message=f"Decided without asking: {evaluation.reason}.")
        try:
            await self.broker.settle(approval.id, decision, by=by)
        except ApprovalError:  # answered meanwhile: the answer was given, the rules decide the call
            pass

    async def _answer_covered(self, session: GateSession) -> None:
        """A new standing rule also answers the session's other pending approvals it covers."""
        for pending in await self.broker.pending(session_id=session.session_id):
            view = ToolCallView(
                name=pending.tool_name,
                arguments=pending.arguments,
                workspace=session.workspace,
                annotations=pending.annotations,
                changed=pending.tool_change,  # a new rule does not answer a changed tool's question
            )
            if self.evaluate(session, view).verdict == "allow" and not escalates(
                pending.carried_results, view, self.policy.trusted_servers
            ):  # a rule never answers a question about a result's text going out
                try:
                    await self.broker.answer(pending.id, Decision(kind="allow_once"), by="rule")
                except ApprovalError:  # answered meanwhile by someone else: theirs stands
                    pass


def _denied_by(evaluation: Evaluation) -> str:
    """What refused a call, as its tool card shows it: the rule's own text when a rule did."""
    return f"Denied by rule {evaluation.rule}" if evaluation.rule else f"Denied: {evaluation.reason}"


def _hook_decider(evaluation: Evaluation) -> Decider:
    """The hook that decided, as the decision's principal; Overseer for anything else."""
    return hook_decider(evaluation.principal) if isinstance(evaluation, HookAllow) else OVERSEER
