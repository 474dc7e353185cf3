"""The approval core under random interleavings: a stateful property test (issue 12, "The proof").

Over the real gate, broker, approval door and policy owner, on a real SQLite file, hypothesis
interleaves tool asks in two sessions, answers from every door and role (several at once, two
to one approval among them), rule and policy changes, approval timeouts, stops, deletes and
restarts (the store reopened and open calls recovered). After every step the core is let settle
and these hold:
- no tool runs without an allow on record for exactly its arguments, written before it started;
- each call runs at most once, across restarts too;
- each approval ends in exactly one terminal state, consistent with what happened to its call
  (never denied, expired or cancelled under a call that ran; allowed leads to a run unless a
  deny rule refused the edited arguments); a pending approval always has its call waiting on it;
- every decision names its principal: the person and door who answered, or Overseer itself;
- a pending approval survives a restart under the same id, unless the rules or its expiry now
  decide it.

`OVERSEER_SOAK_EXAMPLES=N` (or `make soak`) runs N examples of longer runs instead of 300.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from backend.app.approvals import ApproverRequired, RuleInvalid, RuleNotPermitted
from backend.auth import Principal
from backend.domain.models import OVERSEER, Approval, Decider, Decision, Door
from backend.domain.errors import ApprovalClosed, ApprovalNotFound
from backend.approvals.gate import GateCall
from backend.rules.narrow import narrow_rules_for
from backend.rules.policy_engine import ToolCallView

from .core_machine import CURRENT_CALL, SETTLE_SECONDS, SHELL, Clock, RecordingTools, World, settle

T = TypeVar("T")

SOAK_EXAMPLES = int(os.environ.get("OVERSEER_SOAK_EXAMPLES") or 0)
EXAMPLES = SOAK_EXAMPLES or 300
"""300 random runs of 10 steps in the suite (under a minute): every run explores new interleavings
and the example database replays whatever failed; the soak target looks far wider and deeper."""
STEPS = 30 if SOAK_EXAMPLES else 10
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
"""Per-example data dirs on tmpfs when there is one: the same SQLite, without waiting on the disk."""
DATABASE = Path(__file__).resolve().parents[2] / ".pytest_cache" / "hypothesis"

SESSIONS = ("s1", "s2")
COMMANDS = ("git status", "git status -s", "git log", "ls", "rm -rf build", "python -c 'print(1)'")
STANDING_RULES = (
    f"{SHELL}(git status *)",
    f"{SHELL}(ls)",
    f"{SHELL}(rm *)",
    f"{SHELL}(git *)",
    SHELL,
)
BROAD = SHELL
MALFORMED = f"{SHELL}(ls"
DELETED = "The session was deleted."

PEOPLE = (
    Principal(name="vic", role="viewer", kind="user"),
    Principal(name="ann", role="approver", kind="user"),
    Principal(name="ci-bot", role="approver", kind="api_key"),
    Principal(name="root", role="admin", kind="token"),
    Principal(name="me", role="admin", kind="local"),
)
DOORS: tuple[Door, ...] = ("rest", "websocket", "mcp", "elicitation", "terminal")
STANDING = ("allow_session", "allow_always")


@dataclass(kw_only=True)
class Call:
    """A tool call the model asked for, as its transcript has it."""

    id: str
    session_id: str
    arguments: dict[str, Any]
    task: asyncio.Task[Any] | None = None

    @property
    def live(self) -> bool:
        return self.task is not None and not self.task.done()


@dataclass(frozen=True)
class Answer:
    """One person's answer, as drawn: which approval, who, through which door, what."""

    target: int
    """An index among the pending approvals; 3 picks a closed one (or an unknown id)."""
    who: Principal
    via: Door
    kind: str
    rules: str
    """"default" (None: the narrow rule), "narrow" (spelled out), "broad" or "malformed"."""
    edit: str | None


ANSWERS = st.builds(
    Answer,
    target=st.integers(0, 3),
    who=st.sampled_from(PEOPLE),
    via=st.sampled_from(DOORS),
    kind=st.sampled_from(("allow_once", "allow_session", "allow_always", "deny")),
    rules=st.sampled_from(("default", "narrow", "broad", "malformed")),
    edit=st.one_of(st.none(), st.sampled_from(COMMANDS)),
)


class CoreMachine(RuleBasedStateMachine):
    """One host's approval core, driven step by step; one event loop and data dir per example."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="overseer-core-", dir=SCRATCH))
        self.runner = asyncio.Runner()
        self.clock = Clock()
        self.tools = RecordingTools()
        self.calls: dict[str, Call] = {}
        self.winners: dict[str, Decider] = {}
        """Approval id to the decider of the person's answer that closed it."""
        self.seen: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.world: World | None = None
        self.world = self.runner.run(self._open())

    async def _open(self) -> World:
        world = await World.start(self.dir, clock=self.clock, tools=self.tools)
        (self.dir / "workspace").mkdir()
        for session_id in SESSIONS:
            await world.add_session(session_id, self.dir / "workspace")
        return world

    def teardown(self) -> None:
        try:
            if self.world is not None:
                self.runner.run(self.world.shut_down([c.task for c in self.calls.values() if c.live]))  # type: ignore[misc]
        finally:
            self.runner.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    # plumbing

    @property
    def core(self) -> World:
        assert self.world is not None
        return self.world

    def step(self, work: Awaitable[T]) -> T:
        """Run one step's work, then let the core settle before anything else happens."""

        async def go() -> T:
            result = await work
            await settle(self.core, self.tools)
            return result

        return self.runner.run(go())

    def settled(self) -> None:
        """Nothing to run: only let the core settle after a change the test made directly."""
        self.runner.run(settle(self.core, self.tools))

    def start(self, call: Call, *, resumed: bool) -> None:
        session, gate = self.core.sessions[call.session_id], self.core.gate

        async def run() -> Any:
            CURRENT_CALL.set(call.id)
            return await gate.run(
                session, GateCall(id=call.id, name=SHELL, arguments=dict(call.arguments), resumed=resumed)
            )

        call.task = asyncio.create_task(run(), name=f"call {call.id}")

    def live_calls(self, session_id: str | None = None) -> list[Call]:
        return [c for c in self.calls.values() if c.live and session_id in (None, c.session_id)]

    def parked(self) -> dict[str, str]:
        """Call id to the approval its task is parked on."""
        found = {}
        for call in self.live_calls():
            approval_id = self.core.broker.parked(call.task)  # type: ignore[arg-type]
            if approval_id is not None:
                found[call.id] = approval_id
        return found

    async def approval(self, approval_id: str) -> Approval:
        return await self.core.store.get_approval(approval_id)

    async def record(self, call_id: str):  # noqa: ANN201
        call = self.calls[call_id]
        records = {r.id: r for r in await self.core.store.list_tool_calls(call.session_id)}
        return records.get(call_id)

    def runs(self, call_id: str) -> int:
        return sum(1 for r in self.tools.ran if r.call_id == call_id)

    # steps

    @rule(session=st.sampled_from(SESSIONS), command=st.sampled_from(COMMANDS), slow=st.booleans())
    def ask(self, session: str, command: str, slow: bool) -> None:
        """The model asks for a tool call; a slow one stays running until `finish_tool`."""
        if session in self.deleted:
            return
        call = Call(id=f"c{len(self.calls) + 1}", session_id=session, arguments={"command": command})
        self.calls[call.id] = call
        if slow:
            self.tools.slow.add(call.id)

        async def work() -> None:
            self.start(call, resumed=False)

        self.step(work())

    @rule(answers=st.lists(ANSWERS, min_size=1, max_size=3), same=st.booleans())
    def answer(self, answers: list[Answer], same: bool) -> None:
        """People answer through the door, concurrently; `same` aims them all at one approval."""

        async def work() -> list[tuple[Answer, Approval | None, Decision, type[Exception] | None, Any]]:
            approvals = await self.core.store.list_approvals()
            pending = [a for a in approvals if a.status == "pending"]
            closed = [a for a in approvals if a.status != "pending"]

            def pick(index: int) -> Approval | None:
                pool = pending if index < 3 and pending else closed
                return pool[index % len(pool)] if pool else None

            targets = [pick(answers[0].target)] * len(answers) if same else [pick(a.target) for a in answers]
            now = self.clock()
            planned = []
            for spec, before in zip(answers, targets, strict=True):
                decision = self.decision(spec, before)
                planned.append((spec, before, decision, self.refusal(spec, before, decision, now)))
            results = await asyncio.gather(
                *(
                    self.core.service.answer(before.id if before else "no-such-approval", decision, by=spec.who, via=spec.via)
                    for spec, before, decision, _ in planned
                ),
                return_exceptions=True,
            )
            return [(*p, r) for p, r in zip(planned, results, strict=True)]

        outcomes = self.step(work())
        self.runner.run(self.check_answers(outcomes))

    def decision(self, spec: Answer, before: Approval | None) -> Decision:
        if spec.kind == "deny":
            return Decision(kind="deny", message="not this one")
        edited = {"command": spec.edit} if spec.edit is not None else None
        if spec.kind == "allow_once" or spec.rules == "default":
            return Decision(kind=spec.kind, updated_arguments=edited)  # type: ignore[arg-type]
        rules = {
            "narrow": self.narrow(before, edited) if before is not None else [],
            "broad": [BROAD],
            "malformed": [MALFORMED],
        }[spec.rules]
        return Decision(kind=spec.kind, updated_arguments=edited, rules=rules)  # type: ignore[arg-type]

    def narrow(self, approval: Approval, edited: dict[str, Any] | None) -> list[str]:
        """The narrow rules of the call as it would run: what a non-admin may write."""
        view = ToolCallView(
            name=approval.tool_name,
            arguments=edited if edited is not None else approval.arguments,
            workspace=self.core.sessions[approval.session_id].workspace,
            annotations=approval.annotations,
        )
        return narrow_rules_for(view)

    def refusal(
        self, spec: Answer, before: Approval | None, decision: Decision, now: Any
    ) -> type[Exception] | None:
        """What the door must refuse the answer with, alone; None when it must close the approval."""
        if not spec.who.can("approver"):
            return ApproverRequired
        if before is None:
            return ApprovalNotFound
        if before.status != "pending":
            return ApprovalClosed
        if decision.kind in STANDING and decision.rules is not None:
            if MALFORMED in decision.rules:
                return RuleInvalid
            narrow = self.narrow(before, decision.updated_arguments)
            if not spec.who.can("admin") and any(r not in narrow for r in decision.rules):
                return RuleNotPermitted
        if decision.kind == "allow_always" and not spec.who.can("admin"):
            # A non-admin's "always" needs a narrow rule (issue 31, item 2): none, and only an admin may.
            written = decision.rules if decision.rules is not None else self.narrow(before, decision.updated_arguments)
            if not written:
                return RuleNotPermitted
        if before.expires_at <= now:
            return ApprovalClosed  # the door finds it expired and closes it so
        return None

    async def check_answers(self, outcomes: list[Any]) -> None:
        # What each answered approval was closed with, as its answers were told: one decision each.
        won: dict[str, set[str]] = defaultdict(set)
        closable: set[str] = set()
        for spec, before, decision, expected, result in outcomes:
            if isinstance(result, Approval):
                assert result.decided_by == "user" and result.decider is not None
                assert (result.decider.name, result.decider.kind) == (spec.who.name, spec.who.kind), (
                    f"{spec} was told {result.id} is decided by {result.decider}"
                )
                assert result.decision is not None and result.decision.kind == decision.kind
                if expected is ApprovalClosed and before is not None and before.status != "pending":
                    # The answer that closed it, sent again (safe to retry): told as decided, nothing changed.
                    assert result == before, f"{spec} repeated an answer and changed {before.id}"
                    continue
                assert expected is None, f"{spec} was accepted; expected {expected.__name__}"
                assert result.status == ("allowed" if decision.allows else "denied")
                if result.decider == spec.who.decider(spec.via) and len(outcomes) == 1:
                    assert result.decision.updated_arguments == decision.updated_arguments
                self.winners[result.id] = result.decider
                won[result.id].add(result.model_dump_json(include={"decider", "decision", "status"}))
                continue
            assert isinstance(result, Exception), result
            if expected is None or expected in (RuleInvalid, RuleNotPermitted):
                # Alone it would have been applied (or refused for its rules): only a concurrent
                # closing (another answer, or a rule it wrote) may have come first.
                assert isinstance(result, expected or ApprovalClosed) or isinstance(result, ApprovalClosed), (
                    f"{spec} raised {result!r}; expected {expected and expected.__name__}"
                )
                if isinstance(result, ApprovalClosed):
                    assert before is not None and (await self.approval(before.id)).status != "pending"
            else:
                assert isinstance(result, expected), f"{spec} raised {result!r}; expected {expected.__name__}"
            if expected is None:
                assert before is not None
                closable.add(before.id)
            elif before is not None and before.status == "pending" and expected is not ApprovalClosed:
                assert len(outcomes) > 1 or (await self.approval(before.id)).status == "pending", (
                    f"a refused answer ({expected.__name__}) changed approval {before.id}"
                )
            elif expected is ApprovalClosed and before is not None and before.status == "pending":
                expired = await self.approval(before.id)
                assert expired.status in ("expired", "allowed", "denied", "cancelled")
                if len(outcomes) == 1:
                    assert (expired.status, expired.decided_by) == ("expired", "timeout")
        assert all(len(told) == 1 for told in won.values()), f"two answers won one approval: {dict(won)}"
        for approval_id in closable - set(won):
            closed = await self.approval(approval_id)
            assert closed.status != "pending" and closed.decided_by != "user", (
                f"no answer to {approval_id} won, yet nobody else closed it: {closed.status} by {closed.decided_by}"
            )

    @rule(effect=st.sampled_from(("allow", "deny")), text=st.sampled_from(STANDING_RULES), add=st.booleans())
    def change_rule(self, effect: str, text: str, add: bool) -> None:
        """An admin adds or removes a rule in the settings (written to the config file)."""
        permissions = self.core.policy.permissions
        rules = getattr(permissions, effect)
        if add and text not in rules:
            rules.append(text)
        elif not add and text in rules:
            rules.remove(text)
        self.core.policy.set_permissions(permissions)
        self.settled()

    @rule(policy=st.sampled_from(("ask", "ask", "always_allow", "deny")))
    def change_policy(self, policy: str) -> None:
        """An admin sets the shell tool's policy."""
        self.core.policy.set_policies({SHELL: policy})  # type: ignore[dict-item]
        self.settled()

    @rule(seconds=st.sampled_from((120.0, 400.0, 700.0)), wake=st.booleans())
    def time_passes(self, seconds: float, wake: bool) -> None:
        """The clock moves; with `wake`, the waits notice (as their timers would)."""

        async def work() -> list[Approval]:
            pending = await self.core.broker.pending()
            self.clock.advance(seconds)
            if wake:
                self.core.broker.wake_all()
            return pending

        pending = self.step(work())

        async def check() -> None:
            for before in pending:
                after = await self.approval(before.id)
                if wake and before.expires_at <= self.clock():
                    assert (after.status, after.decided_by, after.decider) == ("expired", "timeout", OVERSEER)
                    record = await self.record(before.tool_call_id)
                    assert record is not None and record.status == "denied"
                else:
                    assert after.status == "pending", f"{before.id} closed without its time: {after.status}"

        self.runner.run(check())

    @rule(index=st.integers(0, 7))
    def stop(self, index: int) -> None:
        """A person stops one call (as SessionRunner.stop cancels a run): not a shutdown."""
        live = self.live_calls()
        if not live:
            return
        call = live[index % len(live)]

        async def work() -> tuple[str | None, bool]:
            assert call.task is not None
            parked, held = self.core.broker.parked(call.task), self.tools.holds(call.task)
            call.task.cancel()
            await asyncio.wait([call.task], timeout=SETTLE_SECONDS)
            return parked, held

        parked, held = self.step(work())

        async def check() -> None:
            record = await self.record(call.id)
            assert record is not None and record.status == "stopped", record
            if parked is not None:
                approval = await self.approval(parked)
                assert (approval.status, approval.decided_by) == ("cancelled", "stop")
            assert self.runs(call.id) == (1 if held else 0)

        self.runner.run(check())

    @rule(session=st.sampled_from(SESSIONS))
    def delete(self, session: str) -> None:
        """A person deletes a session: its approvals withdrawn, its calls stopped."""
        self.deleted.add(session)

        async def work() -> None:
            for approval in await self.core.broker.pending(session_id=session):
                await self.core.broker.cancel(approval.id, DELETED)
            tasks = [c.task for c in self.live_calls(session)]
            for task in tasks:
                task.cancel()  # type: ignore[union-attr]
            if tasks:
                await asyncio.wait(tasks, timeout=SETTLE_SECONDS)  # type: ignore[arg-type]

        self.step(work())

        async def check() -> None:
            assert await self.core.broker.pending(session_id=session) == []
            for record in await self.core.store.list_tool_calls(session):
                assert record.finished_at is not None, record

        self.runner.run(check())

    @rule(index=st.integers(0, 7))
    def finish_tool(self, index: int) -> None:
        """A held tool run returns."""
        held = self.tools.held()
        if not held:
            return
        call_id = held[index % len(held)]

        async def work() -> None:
            self.tools.release(call_id)

        self.step(work())

        async def check() -> None:
            record = await self.record(call_id)
            assert record is not None and record.status == "done", record

        self.runner.run(check())

    @rule()
    def restart(self) -> None:
        """Shut down (nothing ends: it is not a stop), reopen the store and recover open calls.

        Recovery is the engines' (`backend.engine.settle`): a call that was running is recorded
        interrupted and never run again; any other open call goes through the gate again, resumed.
        """

        async def work() -> tuple[list[Approval], list[str]]:
            pending = await self.core.broker.pending()
            await self.core.shut_down([c.task for c in self.live_calls()])  # type: ignore[misc]
            self.world = await World.start(self.dir, clock=self.clock, tools=self.tools)
            interrupted = []
            for call in self.calls.values():
                record = await self.record(call.id)
                if record is not None and record.finished_at is not None:
                    continue
                if record is not None and record.status == "running":
                    await self.core.gate.record_interrupted(record)
                    interrupted.append(call.id)
                else:
                    self.start(call, resumed=True)
            return pending, interrupted

        pending, interrupted = self.step(work())

        async def check() -> None:
            parked = self.parked()
            for before in pending:
                after = await self.approval(before.id)
                again = [a for a in await self.core.store.list_approvals() if a.tool_call_id == before.tool_call_id]
                assert [a.id for a in again] == [before.id], "recovery asked again under a new id"
                if after.status == "pending":
                    assert parked.get(before.tool_call_id) == before.id, "a pending approval nobody waits on"
                elif after.decided_by == "timeout":
                    assert after.status == "expired" and before.expires_at <= self.clock()
                else:
                    assert after.decided_by in ("rule", "policy"), f"{before.id} closed by {after.decided_by}"
                    session = self.core.sessions[before.session_id]
                    view = ToolCallView(
                        name=before.tool_name,
                        arguments=before.arguments,
                        workspace=session.workspace,
                        annotations=before.annotations,
                    )
                    verdict = self.core.gate.evaluate(session, view).verdict
                    assert verdict != "ask" and after.status == ("allowed" if verdict == "allow" else "denied")
            for call_id in interrupted:
                record = await self.record(call_id)
                assert record is not None and record.status == "interrupted" and self.runs(call_id) == 1

        self.runner.run(check())

    # invariants

    @invariant()
    def the_core_keeps_its_promises(self) -> None:
        self.runner.run(self.verify_promises())

    async def verify_promises(self) -> None:
        store = self.core.store
        approvals = await store.list_approvals()
        audit = await store.list_audit(limit=100_000)
        records = {r.id: r for s in SESSIONS for r in await store.list_tool_calls(s)}
        runs = Counter(r.call_id for r in self.tools.ran)
        parked = self.parked()
        held = set(self.tools.held())
        by_call: dict[str, list[Approval]] = defaultdict(list)
        for approval in approvals:
            by_call[approval.tool_call_id].append(approval)

        # No tool runs without an allow on record, for exactly its arguments; each call runs once.
        for run in self.tools.ran:
            assert run.allow_on_record, f"{run.call_id} ran with no allow on record for {run.arguments}"
            assert run.running_on_record, f"{run.call_id} ran while its record did not say running"
        assert all(n == 1 for n in runs.values()), f"a call ran twice: {dict(runs)}"
        allows = [e for e in audit if e.decision == "allow"]
        assert Counter(e.tool_call_id for e in allows) == runs, "allow rows and runs differ"
        ran_with = {r.call_id: r.arguments for r in self.tools.ran}
        assert all(e.arguments == ran_with[e.tool_call_id] for e in allows)

        # Each approval: one terminal state, consistent with its call, decided by someone named.
        for approval in approvals:
            call = self.calls[approval.tool_call_id]
            previous = self.seen.setdefault(approval.id, approval.status)
            assert previous in ("pending", approval.status), f"{approval.id} went {previous} -> {approval.status}"
            self.seen[approval.id] = approval.status
            assert len(by_call[call.id]) == 1, f"call {call.id} has {len(by_call[call.id])} approvals"
            if approval.status == "pending":
                assert approval.decision is None and approval.decider is None and approval.decided_by is None
                assert parked.get(call.id) == approval.id, f"pending approval {approval.id} has no waiting call"
                continue
            assert approval.decision is not None and approval.decided_at is not None
            assert approval.decided_by is not None and approval.decider is not None
            if approval.decided_by == "user":
                assert approval.decider == self.winners.get(approval.id), approval.decider
            else:
                assert approval.decider == OVERSEER, approval.decider
            record = records[call.id]
            if approval.status == "allowed":
                refused_edit = record.status == "denied" and any(
                    e.tool_call_id == call.id and e.decision == "deny" and e.detail.startswith("edited arguments")
                    for e in audit
                )
                assert runs[call.id] == 1 or refused_edit, f"{approval.id} allowed, but {call.id} is {record.status}"
            else:
                assert runs[call.id] == 0, f"{call.id} ran under a {approval.status} approval"
                assert record.status in ("denied", "stopped"), f"{approval.status} approval, call {record.status}"
                expected_by = {"expired": ("timeout",), "cancelled": ("stop",), "denied": ("user", "rule", "policy")}
                assert approval.decided_by in expected_by[approval.status], (approval.status, approval.decided_by)
                if approval.status == "expired":
                    assert approval.expires_at <= self.clock()

        # Every call: a record that matches its task and its runs.
        for call in self.calls.values():
            task = call.task
            if task is not None and task.done() and not task.cancelled():
                assert task.exception() is None, f"call {call.id} raised {task.exception()!r}"
            record = records.get(call.id)
            assert record is not None, f"call {call.id} has no record"
            if record.finished_at is None:
                assert call.live, f"call {call.id} is {record.status} with nothing running it"
                if record.status == "waiting_approval":
                    assert call.id in parked, f"call {call.id} waits, but not on an approval"
                else:
                    assert record.status == "running" and call.id in held, f"call {call.id} is {record.status}"
            else:
                assert not call.live, f"call {call.id} is finished ({record.status}) but still running"
                assert record.status in ("done", "interrupted", "denied", "stopped"), record.status
                if record.status in ("done", "interrupted"):
                    assert runs[call.id] == 1
                elif record.status == "denied":
                    assert runs[call.id] == 0

        # Audit rows name their decider: a person only for a person's answer.
        for entry in audit:
            if entry.decider != OVERSEER:
                [approval] = by_call[entry.tool_call_id]
                assert approval.decided_by == "user" and entry.decider == approval.decider, entry
            if entry.decided_by == "user":
                assert entry.decider != OVERSEER, entry

        # Each session shows as many waits as it has calls waiting.
        for session_id in SESSIONS:
            waiting = sum(1 for c in parked if self.calls[c].session_id == session_id)
            assert self.core.book.waiting[session_id] == waiting, (session_id, self.core.book.waiting, waiting)


@pytest.mark.timeout(0 if SOAK_EXAMPLES else 300)
def test_the_approval_core_keeps_its_promises_under_any_interleaving() -> None:
    run_state_machine_as_test(
        CoreMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            print_blob=True,
            database=DirectoryBasedExampleDatabase(str(DATABASE)),
        ),
    )


def test_a_call_resumed_after_its_approval_expired_unseen_follows_the_rules_that_now_decide_it() -> None:
    """Found by the property above: the policy became always_allow, the deadline passed while the
    host was down, and the resumed call ran under an approval closed as expired."""
    machine = CoreMachine()
    try:
        machine.ask(command="git status", session="s1", slow=False)
        machine.change_policy(policy="always_allow")
        machine.time_passes(seconds=700.0, wake=False)
        machine.restart()
        machine.the_core_keeps_its_promises()
    finally:
        machine.teardown()
