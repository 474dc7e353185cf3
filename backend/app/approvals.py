"""ApprovalService: the one door through which every answer to an approval comes in.

REST, the WebSocket, the MCP gateway, elicitation, the terminal, workflows and channels all
answer here, as a principal. The door checks, before anything closes:
- the decider's role (approvers and admins answer; viewers only look);
- the rules a standing decision ("allow for this session", "always allow") would write: each
  must parse, and a non-admin may write only the narrow rules suggested for the call (the call
  as allowed, edits included): anything broader is an admin's power, refused with the rule named;
  a non-admin's "always allow" is kept for the session's workspace (or named agent), never for
  every session, and needs a narrow rule (issue 31, item 2);
- that an automatic answer (the auto-approve switch) is not given to a question only a person may
  answer: the agent changing its own instruction files (backend/rules/bootstrap_guard.py), or a
  call the managed policy's ask rules put to a person;
- that the managed policy allows the answer at all ("always allow" may be turned off there; a 403
  naming the setting and its file);
- then the approval is closed once, in the store, with the principal and its door recorded on
  the approval (and by the gate, on the audit row).
"""

from __future__ import annotations

from pathlib import Path

from backend.app.file_preview import FileOnDisk, file_on_disk
from backend.app.managed_policy import check_switch, refused
from backend.auth import Principal
from backend.domain.errors import ApprovalClosed, ApprovalNotFound, DomainError, Forbidden, Invalid
from backend.domain.models import Approval, ApprovalStatus, Decision, Door, Session, StandingScope, StandingScopeKind
from backend.approvals.broker import ApprovalBroker
from backend.rules.bootstrap_guard import is_instruction_change
from backend.approvals.elicitation_desk import checked_content
from backend.rules.narrow import argument_rules_for, narrow_rules_for
from backend.rules.policy_engine import ToolCallView
from backend.rules.grammar import RuleError, RuleSet
from backend.rules.managed import MANAGED_PREFIX, NO_MANAGED_POLICY, ManagedLocked, ManagedPolicy
from backend.approvals.sampling_desk import checked_edit
from backend.store.base import NotFound, Store


class ApproverRequired(Forbidden):
    """The caller may look at approvals but not answer them."""


class PersonRequired(Forbidden):
    """An automatic answer to a question that needs a person's, every time."""


class RuleNotPermitted(Forbidden):
    """A standing decision carries a rule broader than the call needs, from a non-admin."""


class RuleInvalid(Invalid):
    """A standing decision carries a rule that does not parse, or one for a gate."""


class DecisionInvalid(Invalid):
    """A decision of a kind the approval cannot take (e.g. "always allow" for a server's question)."""


def _checked_elicitation_answer(approval: Approval, decision: Decision) -> Decision:
    """A server's question takes accept (allow_once, with content fitting its schema), decline (deny) or cancel."""
    if decision.kind in ("deny", "cancel"):
        return decision.model_copy(update={"updated_arguments": None, "rules": None})
    if decision.kind != "allow_once":
        raise DecisionInvalid(
            "a server's question is answered once: accept it (allow_once, with the form's content), "
            "decline it (deny) or cancel it"
        )
    content = checked_content(approval.arguments.get("schema") or {}, decision.updated_arguments)
    return decision.model_copy(update={"updated_arguments": content, "rules": None})


def _checked_sampling_answer(approval: Approval, decision: Decision) -> Decision:
    """A server's sampling request runs once as asked or edited (allow_once), or is refused (deny)."""
    if decision.kind == "deny":
        return decision.model_copy(update={"updated_arguments": None, "rules": None})
    if decision.kind != "allow_once":
        raise DecisionInvalid(
            "a server's sampling request is answered once: allow it (allow_once, optionally with its "
            "texts edited) or deny it"
        )
    prompt = checked_edit(approval.arguments, decision.updated_arguments)
    edited = prompt if prompt != approval.arguments else None
    return decision.model_copy(update={"updated_arguments": edited, "rules": None})


def _decided_by(approval: Approval, by: Principal) -> bool:
    """True when `by` is the person (or key, or client) who answered `approval`, through any door."""
    decider = approval.decider
    return approval.decided_by == "user" and decider is not None and (decider.name, decider.kind) == (by.name, by.kind)


def _meaning(approval: Approval, decision: Decision | None) -> tuple[object, ...]:
    """What a decision does to `approval`: answers that compare equal here are the same answer.

    Kind, note and, where they apply, the standing rules (as a set) and the edited arguments (an
    edit to the arguments as asked is no edit); any other field of the decision as it is.
    """
    if decision is None:
        return ()
    standing = decision.kind in ("allow_session", "allow_always") and decision.rules is not None
    rules = tuple(sorted(set(decision.rules or []))) if standing else None
    edited = decision.updated_arguments
    if not decision.allows or edited == approval.arguments:
        edited = None
    rest = decision.model_dump(mode="json", exclude={"kind", "message", "rules", "updated_arguments"})
    return (decision.kind, (decision.message or "").strip(), rules, edited, rest)


def _who_decided_what(approval: Approval) -> str:
    """Why a later, different answer changes nothing: who closed the approval, and how."""
    decision = approval.decision
    note = f" ({decision.message})" if decision is not None and decision.message else ""
    if approval.decided_by == "user" and approval.decider is not None:
        what = decision.kind if decision is not None else approval.status
        return f"approval {approval.id} is already {approval.status}: {approval.decider.label} answered {what}{note}"
    return f"approval {approval.id} is already {approval.status} by {approval.decided_by or 'overseer'}{note}"


def _checked_scope(approval: Approval, decision: Decision, session: Session, admin: bool) -> StandingScopeKind:
    """Where an "always allow" is kept: the session's own scope (its named agent's, else its
    workspace's) unless an admin says "global", which is an admin's default too."""
    local = approval.always_scope or StandingScope.of_session(session.workspace, session.agent_id)
    wanted = decision.scope or ("global" if admin else local.kind)
    if wanted == "global":
        if not admin:
            raise RuleNotPermitted(
                f"only an admin may allow a rule for every session; yours is kept for this {local.label}"
            )
        return "global"
    if wanted != local.kind:
        raise DecisionInvalid(
            f"this session's own scope is its {local.label}, not a {wanted}: send scope {local.kind!r} or leave it out"
        )
    return wanted


class ApprovalService:
    """Answers approvals on behalf of a principal; the only way people decide."""

    def __init__(self, *, store: Store, broker: ApprovalBroker, managed: ManagedPolicy = NO_MANAGED_POLICY) -> None:
        self._store = store
        self._broker = broker
        self._managed = managed

    async def answer(self, approval_id: str, decision: Decision, *, by: Principal, via: Door) -> Approval:
        """Check, then close the approval once with `decision`, recording `by` and `via`.

        Safe to retry: the same answer again from the same principal (its response was lost to a
        dropped connection) returns the approval as decided and changes nothing. Any other answer
        to a closed approval raises ApprovalClosed, saying who decided what.

        Raises ApproverRequired, ApprovalNotFound, ApprovalClosed, PersonRequired, RuleInvalid,
        RuleNotPermitted or LockedByManagedPolicy; when it raises, nothing has changed.
        """
        if not by.can("approver"):
            raise ApproverRequired(f"answering approvals needs the approver role; {by.name} is {by.role}")
        if decision.kind == "allow_always":
            check_switch(self._managed, "disable_allow_always", '"always allow"')
        if decision.rules:
            try:
                self._managed.check_allow_rules(decision.rules)
            except ManagedLocked as exc:
                raise refused(exc) from None
        approval = await self.get(approval_id)
        if approval.status != "pending":
            return await self._repeated(approval, decision, by)
        if via == "auto" and is_instruction_change(approval):
            raise PersonRequired(
                "the agent changing its own instructions needs a person's answer; auto-approve does not give it"
            )
        if via == "auto" and approval.reason.startswith(MANAGED_PREFIX):
            raise PersonRequired("the managed policy puts this call to a person; auto-approve does not answer it")
        if via == "auto" and approval.kind == "unconfined":
            raise PersonRequired("a command outside the sandbox needs a person's answer; auto-approve does not give it")
        if via == "auto" and approval.tool_change is not None:  # issue 34: a rug pull is for a person to see
            raise PersonRequired("a tool whose definition changed needs a person's answer; auto-approve does not give it")
        checked = await self._checked(approval, decision, by)
        try:
            return await self._broker.answer(approval_id, checked, by="user", decider=by.decider(via))
        except ApprovalClosed:  # closed meanwhile (on this host or another): perhaps by this answer, sent twice
            return await self._repeated(await self.get(approval_id), decision, by)

    async def _repeated(self, closed: Approval, decision: Decision, by: Principal) -> Approval:
        """A closed approval answered again: as decided when it is `by`'s own answer repeated.

        The repeat is checked as the first answer was, so "always allow" with the narrow rule left
        implicit repeats the one that wrote it. Anything else is refused, naming who decided what.
        """
        if _decided_by(closed, by):
            try:
                checked: Decision | None = await self._checked(closed, decision, by)
            except DomainError:  # a repeat the checks refuse is not the answer that closed it
                checked = None
            if checked is not None and _meaning(closed, checked) == _meaning(closed, closed.decision):
                return closed
        raise ApprovalClosed(_who_decided_what(closed))

    async def get(self, approval_id: str) -> Approval:
        """One approval, pending or closed (ApprovalNotFound for no such approval)."""
        try:
            return await self._store.get_approval(approval_id)
        except NotFound as exc:
            raise ApprovalNotFound(f"no approval {approval_id!r}") from exc

    async def find(self, *, status: ApprovalStatus | None = None, session_id: str | None = None) -> list[Approval]:
        """Approvals, newest first, of one status and one session when given."""
        return await self._store.list_approvals(status=status, session_id=session_id)

    async def pending(self, *, session_id: str | None = None) -> list[Approval]:
        """What waits for an answer now (in one session when given), those from before a restart included."""
        return await self._broker.pending(session_id=session_id)

    async def file_on_disk(self, approval_id: str) -> FileOnDisk:
        """The file a pending write or edit would change, as it is now (for the card's diff)."""
        return await file_on_disk(self._store, approval_id)

    async def _checked(self, approval: Approval, decision: Decision, by: Principal) -> Decision:
        """The decision as it will be applied: a standing decision's rules resolved and vetted."""
        if approval.kind == "elicitation":
            return _checked_elicitation_answer(approval, decision)
        if approval.kind == "sampling":
            return _checked_sampling_answer(approval, decision)
        if decision.kind == "cancel":
            raise DecisionInvalid(f"cancel answers only a server's question; allow or deny this {approval.kind}")
        if approval.kind == "unconfined" and decision.kind in ("allow_session", "allow_always"):
            raise DecisionInvalid("a command outside the sandbox is allowed once at a time, never for the session or always")
        if decision.kind not in ("allow_session", "allow_always"):
            return decision
        if approval.kind != "tool":
            if decision.rules:
                raise RuleInvalid(f"a {approval.kind} gate takes no rules; allow it once or deny it")
            if approval.kind == "network" and decision.kind == "allow_always" and not by.can("admin"):
                raise RuleNotPermitted(
                    "only an admin may allow a host for every session; allow it once or for this session"
                )
            return decision
        session = await self._store.get_session(approval.session_id)
        narrow = self._narrow_rules(approval, decision, session)
        rules = narrow if decision.rules is None else list(dict.fromkeys(decision.rules))
        try:
            RuleSet.from_config({"allow": rules}, source="approval", strict=True)
        except RuleError as exc:
            raise RuleInvalid(str(exc)) from exc
        admin = by.can("admin")
        if not admin:  # the exact rule, or one narrowed by an argument the card offered (issue 34)
            by_argument = self._argument_rules(approval, decision, session)
            broader = [r for r in rules if r not in narrow and r not in by_argument]
            if broader:
                offered = ", ".join(narrow) or "none (this call cannot be allowed by a rule)"
                raise RuleNotPermitted(
                    f"rule {broader[0]!r} is broader than this call needs; only an admin may write it. "
                    f"The narrow rule for this call: {offered}"
                )
            if decision.kind == "allow_always" and not rules:
                raise RuleNotPermitted(
                    f"only an admin may allow every call of {approval.tool_name}; allow it once or for this session"
                )
        if decision.kind != "allow_always":
            return decision.model_copy(update={"rules": rules, "scope": None})
        return decision.model_copy(update={"rules": rules, "scope": _checked_scope(approval, decision, session, admin)})

    def _argument_rules(self, approval: Approval, decision: Decision, session: Session) -> list[str]:
        """The rules narrowed by one argument for the call as it will run (none carrying result text)."""
        view = ToolCallView(
            name=approval.tool_name,
            arguments=decision.updated_arguments if decision.updated_arguments is not None else approval.arguments,
            workspace=Path(session.workspace),
            annotations=approval.annotations,
        )
        return argument_rules_for(view, leave_out={c.argument for c in approval.carried_results})

    def _narrow_rules(self, approval: Approval, decision: Decision, session: Session) -> list[str]:
        """The narrow rules for the call as it will run (edited arguments included)."""
        view = ToolCallView(
            name=approval.tool_name,
            arguments=decision.updated_arguments if decision.updated_arguments is not None else approval.arguments,
            workspace=Path(session.workspace),
            annotations=approval.annotations,
        )
        return narrow_rules_for(view)
