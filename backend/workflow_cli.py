"""`overseer workflow run` in a terminal: follow each step's session and ask at each gate.

The run itself is driven by the host's WorkflowRunner, exactly as for the dashboard; this only
watches the event bus, renders the run's sessions with TerminalUI (which also answers their tool
approvals) and answers the run's gates: allow, deny with a reason, or edit the next prompt.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from backend.domain.models import Approval
from backend.engine.events import Subscription
from backend.app.host import Host
from backend.terminal import ApproveMode, TerminalUI
from backend.domain.workflows import WorkflowRun

FOLLOW_SLICE = 60.0
"""How long to wait for an event before looking at the run in the store again."""
FINAL_WAIT = 30.0


class WorkflowTerminal:
    """Runs one workflow in the terminal; exit status 0 iff the run completed."""

    def __init__(
        self,
        host: Host,
        *,
        approve: ApproveMode = "ask",
        out: TextIO | None = None,
        read_line: Any = None,
    ) -> None:
        self.host = host
        self.ui = TerminalUI(host, approve=approve, out=out, read_line=read_line)

    async def run(self, name: str, input: str, *, workspace: str | None = None) -> int:  # noqa: A002
        """Start the run and follow it to its end."""
        sub = self.host.bus.subscribe(None)
        try:
            run = await self.host.workflows.start(name, input, workspace=workspace)
            self.ui.line(f"Workflow {run.workflow}: {len(run.steps)} steps · run {run.id[:8]}")
            await self._follow(sub, run)
        finally:
            self.host.bus.unsubscribe(sub)
        final = await self.host.workflows.wait(run.id, timeout=FINAL_WAIT)
        self.ui.line(f"══ workflow {final.status}" + (f": {final.detail}" if final.detail else ""))
        return 0 if final.status == "completed" else 1

    async def _follow(self, sub: Subscription, run: WorkflowRun) -> None:
        # The run's step sessions, and their sub-agents (shown indented).
        prefixes: dict[str, str] = {}
        while True:
            try:
                event = await sub.get(timeout=FOLLOW_SLICE)
            except TimeoutError:
                if not (await self.host.store.get_workflow_run(run.id)).active:
                    return
                continue
            except EOFError:  # fell behind and was cut off: the run goes on; its end is awaited
                return
            data = event.data
            if event.type == "session.created":
                if data.get("workflow_run_id") == run.id:
                    prefixes[event.session_id] = ""
                    self.ui.line(f"── {data.get('title', '')}")
                elif data.get("parent_id") in prefixes:
                    prefixes[event.session_id] = "  │ "
                    self.ui.line(f"  ↳ sub-agent {event.session_id[:8]}: {data.get('title', '')}")
                continue
            if event.session_id not in prefixes:
                continue
            if data.get("run_id") == run.id:
                if event.type == "workflow.finished":
                    return
                if event.type == "workflow.step" and data.get("status") != "running":
                    self.ui.line(f"── step {data['step']}/{data['of']} {data['status']}")
                continue
            if event.type == "approval.requested" and data.get("kind") == "workflow_step":
                await self.answer_gate(Approval.model_validate(data))
                continue
            await self.ui.render(event, prefix=prefixes[event.session_id])

    async def answer_gate(self, approval: Approval) -> None:
        """Ask (or, with --approve all/none, decide) whether the next step starts, and with what prompt."""
        await self.ui.answer(approval)


def print_definitions(host: Host, *, as_json: bool, out: TextIO) -> int:
    """`overseer workflow list`: each usable definition, its source and its steps."""
    workflows = host.workflows.definitions()
    if as_json:
        out.write(json.dumps([w.model_dump(mode="json") for w in workflows], indent=2) + "\n")
        return 0
    for workflow in workflows:
        steps = " → ".join(s.mode + (" (approve)" if s.approve else "") for s in workflow.steps)
        out.write(f"{workflow.name} [{workflow.source}]: {workflow.description}\n    {steps}\n")
    if not workflows:
        out.write("No workflows found.\n")
    return 0
